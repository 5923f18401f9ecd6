import { statSync } from "node:fs";
import type Database from "better-sqlite3";
import { SessiondError } from "../../model/errors.js";
import type { Expectation, GroupOutcome, WriteChange, WriteGroup } from "../driver.js";
import { RecentMap } from "../recent-map.js";
import type { SessionRow } from "../sql/rows.js";
import {
  entryInsertParams,
  sessionAfterAppendParams,
  sessionInsertParams,
  sessionUpdateParams,
} from "../sql/rows.js";
import type { Durability } from "../store.js";
import { Checkpointer } from "./checkpointer.js";
import { DataVersion, type WriterSignals } from "./data-version.js";
import { InboxTable } from "./inbox-table.js";
import { JournalFold } from "./journal-fold.js";
import { type IndexProgress, SqliteSearchIndex } from "./search-index.js";
import { asStoreError, isFsyncError, isIoError, SQL, Statements, walSyncFailed } from "./sqlite-sql.js";
import { WalSync } from "./wal-sync.js";

export interface SqliteWriterOptions {
  path: string;
  durability: Durability;
  foldThreshold: number;
  journalMinBatch: number;
  idleFoldMs: number;
  /** The least time between two checkpoints of the checkpoint thread, ms. */
  checkpointIntervalMs: number;
  /** Called when a checkpoint's fsync failed: the store stops. */
  onFailure: (error: unknown) => void;
  signals: WriterSignals;
}

/**
 * The main connection checkpoints once the WAL holds this many pages (about 8 MB), and the WAL then starts
 * over from its beginning (see Checkpointer). Kept small on purpose: a commit that overwrites WAL pages is
 * made durable by an fdatasync alone, one that grows the file also commits its new size to the
 * filesystem's journal. At 10,000 pages sequential durable appends ran at 0.48-0.54x of raw SQLite, at
 * 2,000 at 0.70-0.75x; at 1,000 (SQLite's default) concurrent appends lost some 8% to the checkpoints
 * that then run inside commits.
 */
const BACKSTOP_CHECKPOINT_PAGES = 2_000;

/**
 * The WAL file's bound. SQLite truncates the WAL to it when the WAL starts over (`journal_size_limit`), so
 * a file larger than this holds more than this since the last start: the writer then waits for a
 * checkpoint of the thread that holds its own off and copies the rest itself.
 */
const WAL_LIMIT_BYTES = 10 * 1024 * 1024;

/** How long the writer waits for the checkpoint thread before it leaves the WAL to grow for a while. */
const CHECKPOINT_WAIT_MS = 5_000;

const OK: GroupOutcome = { ok: true };

/**
 * The writing half of a SQLite store: a batch commits as one IMMEDIATE transaction; a big one writes its
 * entries through a journal table that is folded into `entries` in key order later (one pass instead of a
 * page per session per commit). Another process may write the file: `PRAGMA data_version` tells, and a
 * batch that finds it changed checks every group's expectations. It runs on the store's writer thread
 * (writer-thread.ts), or on the calling thread over the readers' connection (an in-memory database).
 */
export class SqliteWriter {
  /** In WAL mode on a file: makes durable commits durable. */
  readonly walSync: WalSync | undefined;
  readonly checkpointer: Checkpointer | undefined;
  /** Search, written in the same transactions as the entries. */
  readonly searchIndex: SqliteSearchIndex;
  readonly inbox: InboxTable;
  private readonly sql: Statements;
  private readonly sids = new RecentMap<string, number>(20_000);
  private synchronous: "FULL" | "NORMAL";
  private viaJournal = false;
  /** Whether the groups of the batch being committed must have their expectations checked. */
  private verifying = false;
  private closed = false;
  private readonly fast: Database.Transaction<(groups: readonly WriteGroup[]) => GroupOutcome[]>;
  private readonly careful: Database.Transaction<(groups: readonly WriteGroup[]) => GroupOutcome[]>;
  /** Runs a function in a transaction of its own (`.immediate`), or in a savepoint of the one open. */
  private readonly inTransaction: Database.Transaction<(run: () => unknown) => unknown>;
  private readonly journal: JournalFold;
  private readonly totalChangesQuery: Database.Statement;
  /** Whether the groups of the transaction running changed rows that it commits. */
  private wroteRows = false;
  private syncFailed: Error | undefined;

  constructor(
    readonly db: Database.Database,
    private readonly options: SqliteWriterOptions,
    private readonly dataVersion = new DataVersion(db),
  ) {
    const { path } = options;
    if (path !== ":memory:" && db.pragma("journal_mode", { simple: true }) === "wal") {
      this.walSync = new WalSync(`${path}-wal`);
      db.pragma("synchronous = NORMAL");
      // Halfway to the backstop the writer finishes the thread's checkpoint, so the WAL starts over
      // before it gets there even when the thread's checkpoints run back to back.
      this.checkpointer = new Checkpointer(
        path,
        options.onFailure,
        options.checkpointIntervalMs,
        BACKSTOP_CHECKPOINT_PAGES / 2,
      );
      db.pragma(`wal_autocheckpoint = ${BACKSTOP_CHECKPOINT_PAGES}`);
      db.pragma(`journal_size_limit = ${WAL_LIMIT_BYTES}`);
    }
    this.sql = new Statements(db);
    this.totalChangesQuery = db.prepare("SELECT total_changes()").pluck();
    this.inbox = new InboxTable(db);
    this.searchIndex = new SqliteSearchIndex(db, this.sql);
    this.synchronous = options.durability === "strict" && !this.walSync ? "FULL" : "NORMAL";
    this.inTransaction = db.transaction((run: () => unknown) => run());
    this.journal = new JournalFold(db, this.sql, this.inTransaction, {
      path,
      foldThreshold: options.foldThreshold,
      idleFoldMs: options.idleFoldMs,
      committed: () => this.walSync?.committed(),
      counted: (run) => this.counted(run),
      search: this.searchIndex,
    });
    // The usual case: every group commits, and none pays for a savepoint of its own.
    this.fast = db.transaction((groups: readonly WriteGroup[]) => {
      this.begin(groups);
      const before = this.totalChanges();
      const outcomes = groups.map((group) => this.applyGroup(group));
      this.wroteRows = this.totalChanges() > before;
      this.journal.foldIfFull();
      return outcomes;
    });
    // After any group failed, the batch is rolled back and run again with a savepoint per group, so the
    // failed group leaves nothing behind and the others still commit; the groups after it are checked.
    this.careful = db.transaction((groups: readonly WriteGroup[]) => {
      this.begin(groups);
      const outcomes = groups.map((group): GroupOutcome => {
        try {
          let outcome = OK;
          const before = this.totalChanges();
          this.inTransaction(() => {
            outcome = this.applyGroup(group);
          });
          if (this.totalChanges() > before) this.wroteRows = true;
          return outcome;
        } catch (error) {
          this.verifying = true;
          this.forget();
          return { ok: false, error: asStoreError(error) };
        }
      });
      this.journal.foldIfFull();
      return outcomes;
    });
  }

  /** Commits one batch; a durable one is durable once `syncNow` returns or `durableBarrier` resolves. */
  commit(groups: readonly WriteGroup[], durable: boolean): GroupOutcome[] {
    if (this.journal.corrupt) throw this.journal.corrupt;
    if (!this.walSync)
      this.setSynchronous(durable || this.options.durability === "strict" ? "FULL" : "NORMAL");
    try {
      let outcomes: GroupOutcome[];
      try {
        outcomes = this.counted(() => this.fast.immediate(groups), true);
      } catch {
        this.forget();
        outcomes = this.counted(() => this.careful.immediate(groups), true);
      }
      this.walSync?.committed();
      return outcomes;
    } catch (error) {
      this.forget();
      // SQLite's own fsync (synchronous=FULL without WalSync, a checkpoint inside COMMIT) failing is a
      // failed fsync as well: the writer stops for STORE_FAILED.
      throw isFsyncError(error) ? walSyncFailed(this.options.path, error) : asStoreError(error);
    } finally {
      this.journal.scheduleIdleFold();
      this.finishCheckpoint();
      this.checkpointer?.request();
    }
  }

  /** The inline fsync of a durable batch. */
  syncNow(): void {
    if (this.syncFailed) throw this.syncFailed;
    try {
      this.walSync?.syncNow();
    } catch (error) {
      throw this.failedSync(error);
    }
  }

  /** Everything committed so far is on disk once this resolves, off the calling thread. */
  durableBarrier(): Promise<void> {
    if (this.syncFailed) return Promise.reject(this.syncFailed);
    if (!this.walSync) return Promise.resolve();
    return this.walSync.sync().catch((error: unknown) => Promise.reject(this.failedSync(error)));
  }

  /**
   * After a failed fsync the kernel may have dropped the pages: a later fsync that succeeds proves nothing,
   * so no later commit is ever called durable.
   */
  private failedSync(error: unknown): Error {
    this.syncFailed ??= walSyncFailed(this.options.path, error);
    return this.syncFailed;
  }

  /**
   * Everything committed so far reaches the disk: the WAL's fsync, then a checkpoint. The fsync is not
   * left to the checkpoint, which syncs nothing when it has nothing to copy or the checkpoint thread's
   * holds it off (busy, which SQLite reports as a result, not an error).
   */
  async sync(): Promise<void> {
    if (this.walSync) {
      this.walSync.committed();
      await this.durableBarrier();
    }
    try {
      this.db.pragma("wal_checkpoint(PASSIVE)");
    } catch (error) {
      const cause = (error as { cause?: unknown }).cause ?? error;
      throw isIoError(cause) ? walSyncFailed(this.options.path, cause) : asStoreError(error);
    }
  }

  /** Forgets finished inbox items last updated before `before`; how many went. */
  prune(before: number): number {
    return this.counted(() => this.inbox.prune(before));
  }

  /** One step of the background build of an upgraded database's search index (search-index.ts). */
  backfillStep(sessions: number): IndexProgress {
    return this.counted(() => this.searchIndex.backfillStep(sessions));
  }

  /** Takes every search row not indexed yet into the index (tests, and a store that closes). */
  indexAll(): void {
    this.counted(() => this.inTransaction.immediate(() => this.searchIndex.indexPending()));
  }

  async close(failed: boolean): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.journal.close();
    if (!failed && !this.journal.corrupt) {
      try {
        this.journal.fold();
      } catch {
        // The journal stays, where readers find it, for the next open to fold.
      }
    }
    await this.walSync?.close();
    await this.checkpointer?.close();
  }

  /**
   * Runs a transaction (or an autocommit statement) and tells the readers' thread whether it surely
   * committed a change (`WriterSignals`): by the rows changed, or for a batch (`byGroups`) by the rows
   * its committed groups changed.
   */
  private counted<T>(run: () => T, byGroups = false): T {
    this.options.signals.beginning();
    let wrote = false;
    try {
      this.wroteRows = false;
      const before = this.totalChanges();
      const result = run();
      wrote = byGroups ? this.wroteRows : this.totalChanges() > before;
      return result;
    } finally {
      this.options.signals.ended(wrote);
    }
  }

  private totalChanges(): number {
    return this.totalChangesQuery.get() as number;
  }

  /** After a rolled-back write: what this side remembers of the file may be wrong. */
  private forget(): void {
    this.sids.clear();
    this.searchIndex.forgetWords();
  }

  /** At a commit boundary: copies what the checkpoint thread left, so the next commit starts the WAL over. */
  private finishCheckpoint(): void {
    if (!this.checkpointer) return;
    if (!this.checkpointer.remainderDue && !this.walOverLimit()) return;
    try {
      this.db.pragma("wal_checkpoint(PASSIVE)");
    } catch (error) {
      const cause = (error as { cause?: unknown }).cause ?? error;
      // Busy only means a later checkpoint does it; a failed fsync stops the store.
      if (isIoError(cause)) this.options.onFailure(walSyncFailed(this.options.path, cause));
    }
    this.checkpointer.finished();
  }

  /** The WAL passed its bound while the thread's checkpoint held the writer's own off: waits for that one. */
  private walOverLimit(): boolean {
    if (!this.checkpointer?.busy) return false;
    const size = statSync(`${this.options.path}-wal`, { throwIfNoEntry: false })?.size ?? 0;
    return size > WAL_LIMIT_BYTES && this.checkpointer.waitIdle(CHECKPOINT_WAIT_MS);
  }

  /** Inside the transaction, after BEGIN IMMEDIATE got the write lock: what another process did shows now. */
  private begin(groups: readonly WriteGroup[]): void {
    this.verifying = this.dataVersion.changed();
    if (this.verifying) this.options.signals.sawForeign();
    this.viaJournal = groups.length >= this.options.journalMinBatch;
  }

  private applyGroup(group: WriteGroup): GroupOutcome {
    if (this.verifying && !group.expects.every((e) => this.holds(e))) return { ok: false, stale: true };
    for (const change of group.changes) this.apply(change);
    if (group.inbox) for (const write of group.inbox) this.inbox.apply(write);
    return OK;
  }

  private holds(expectation: Expectation): boolean {
    const row = this.sql.get(SQL.current).get(expectation.key) as SessionRow | undefined;
    if (expectation.kind === "session")
      return row?.id === expectation.sessionId && row.entry_count === expectation.lastSeq;
    const last = (this.sql.get(SQL.lastGeneration).get(expectation.key) as { g: number | null }).g ?? 0;
    return row === undefined && last === expectation.lastGeneration;
  }

  private apply(change: WriteChange): void {
    switch (change.kind) {
      case "createSession": {
        const info = this.sql.get(SQL.insertSession).run(sessionInsertParams(change.session));
        this.sids.set(change.session.id, Number(info.lastInsertRowid));
        return;
      }
      case "appendEntries": {
        const sid = this.requireSid(change.session.id);
        const closes = change.entries.at(-1)?.type === "reset";
        // A reset entry goes straight into `entries`; appends of a big batch through the journal.
        const insert = this.sql.get(this.viaJournal && !closes ? SQL.insertJournal : SQL.insertEntry);
        for (const entry of change.entries) insert.run(entryInsertParams(sid, entry));
        this.searchIndex.add(sid, change.entries);
        if (this.viaJournal && !closes) this.journal.rows += change.entries.length;
        if (closes) this.sql.get(SQL.updateSession).run(sessionUpdateParams(sid, change.session));
        else this.sql.get(SQL.updateAfterAppend).run(sessionAfterAppendParams(sid, change.session));
        return;
      }
      case "updateSession":
        this.sql
          .get(SQL.updateSession)
          .run(sessionUpdateParams(this.requireSid(change.session.id), change.session));
        return;
      case "moveSessions": {
        const sids = change.sessions.map((s) => this.requireSid(s.id));
        // Negative generations first, so renumbering never collides with the unique (key, generation) index.
        change.sessions.forEach((s, i) => {
          this.sql.get(SQL.renumber).run(s.key, -s.generation, sids[i]);
        });
        change.sessions.forEach((s, i) => {
          this.sql.get(SQL.renumber).run(s.key, s.generation, sids[i]);
          this.sql.get(SQL.updateSession).run(sessionUpdateParams(sids[i]!, s));
        });
        return;
      }
      case "deleteSession": {
        const sid = this.sidOf(change.session.id);
        if (sid === undefined) return;
        this.sql.get(SQL.deleteEntries).run(sid);
        this.searchIndex.remove(sid);
        this.sql.get(SQL.deleteJournal).run(sid);
        this.sql.get(SQL.deleteSession).run(sid);
        this.sids.delete(change.session.id);
        return;
      }
    }
  }

  private sidOf(id: string): number | undefined {
    const cached = this.sids.get(id);
    if (cached !== undefined) return cached;
    const sid = this.sql.get(SQL.sidOf).pluck().get(id) as number | undefined;
    if (sid !== undefined) this.sids.set(id, sid);
    return sid;
  }

  private requireSid(id: string): number {
    const sid = this.sidOf(id);
    if (sid === undefined) throw new SessiondError("SESSION_NOT_FOUND", `session ${id} is not stored`);
    return sid;
  }

  private setSynchronous(mode: "FULL" | "NORMAL"): void {
    if (mode === this.synchronous) return;
    this.db.pragma(`synchronous = ${mode}`);
    this.synchronous = mode;
  }
}
