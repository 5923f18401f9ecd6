import type Database from "better-sqlite3";
import { SessiondError } from "../../model/errors.js";
import { type IndexProgress, SqliteSearchIndex } from "../../search/sqlite/search-index.js";
import type { Expectation, GroupOutcome, WriteChange, WriteGroup } from "../driver.js";
import type { ErasedSender } from "../scrub.js";
import type { EntryRow, SessionRow } from "../sql/rows.js";
import {
  entryInsertParams,
  sessionAfterAppendParams,
  sessionInsertParams,
  sessionUpdateParams,
} from "../sql/rows.js";
import { Statements } from "../sql/sqlite-statements.js";
import type { Durability } from "../store.js";
import { DataVersion, type WriterSignals } from "./data-version.js";
import { InboxTable } from "./inbox-table.js";
import { JournalFold } from "./journal-fold.js";
import { type ScrubCounts, scrubDatabase } from "./scrub.js";
import { SidCache } from "./sid-cache.js";
import { asStoreError, isFsyncError, SQL, walSyncFailed } from "./sqlite-sql.js";
import { WalUpkeep } from "./wal-upkeep.js";

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

const OK: GroupOutcome = { ok: true };

/**
 * The writing half of a SQLite store: a batch commits as one IMMEDIATE transaction; a big one writes its
 * entries through a journal table that is folded into `entries` in key order later (one pass instead of a
 * page per session per commit). Another process may write the file: `PRAGMA data_version` tells, and a
 * batch that finds it changed checks every group's expectations. It runs on the store's writer thread
 * (writer-thread.ts), or on the calling thread over the readers' connection (an in-memory database).
 */
export class SqliteWriter {
  /** In WAL mode on a file: its fsyncs and checkpoints. */
  readonly wal: WalUpkeep | undefined;
  /** Search, written in the same transactions as the entries. */
  readonly searchIndex: SqliteSearchIndex;
  readonly inbox: InboxTable;
  private readonly sql: Statements;
  private readonly sids: SidCache;
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

  constructor(
    readonly db: Database.Database,
    private readonly options: SqliteWriterOptions,
    private readonly dataVersion = new DataVersion(db),
  ) {
    const { path } = options;
    if (path !== ":memory:" && db.pragma("journal_mode", { simple: true }) === "wal")
      this.wal = new WalUpkeep(db, path, options.onFailure, options.checkpointIntervalMs);
    this.sql = new Statements(db);
    this.sids = new SidCache(this.sql);
    this.totalChangesQuery = db.prepare("SELECT total_changes()").pluck();
    this.inbox = new InboxTable(db);
    const sql = this.sql;
    this.searchIndex = new SqliteSearchIndex(
      db,
      sql,
      (sid) =>
        sql
          .get(SQL.rangeAsc)
          .all({ sid, after: 0, before: Number.MAX_SAFE_INTEGER, limit: -1 }) as EntryRow[],
    );
    this.synchronous = options.durability === "strict" && !this.wal ? "FULL" : "NORMAL";
    this.inTransaction = db.transaction((run: () => unknown) => run());
    this.journal = new JournalFold(db, this.sql, this.inTransaction, {
      path,
      foldThreshold: options.foldThreshold,
      idleFoldMs: options.idleFoldMs,
      committed: () => this.wal?.committed(),
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
    if (!this.wal) this.setSynchronous(durable || this.options.durability === "strict" ? "FULL" : "NORMAL");
    try {
      let outcomes: GroupOutcome[];
      try {
        outcomes = this.counted(() => this.fast.immediate(groups), true);
      } catch {
        this.forget();
        outcomes = this.counted(() => this.careful.immediate(groups), true);
      }
      this.wal?.committed();
      return outcomes;
    } catch (error) {
      this.forget();
      // SQLite's own fsync (synchronous=FULL without WalSync, a checkpoint inside COMMIT) failing is a
      // failed fsync as well: the writer stops for STORE_FAILED.
      throw isFsyncError(error) ? walSyncFailed(this.options.path, error) : asStoreError(error);
    } finally {
      this.journal.scheduleIdleFold();
      this.wal?.afterCommit();
    }
  }

  /** The inline fsync of a durable batch. */
  syncNow(): void {
    this.wal?.syncNow();
  }

  /** Everything committed so far is on disk once this resolves, off the calling thread. */
  durableBarrier(): Promise<void> {
    return this.wal ? this.wal.durableBarrier() : Promise.resolve();
  }

  /** Everything committed so far reaches the disk, and the database file. */
  async sync(): Promise<void> {
    await this.wal?.sync();
  }

  /** Forgets finished inbox items last updated before `before`; how many went. */
  prune(before: number): number {
    return this.counted(() => this.inbox.prune(before));
  }

  /** Erasure: the keys' inbox rows go and the file is rewritten without freed bytes (scrub.ts). */
  scrub(keys: readonly string[], senders: readonly ErasedSender[]): ScrubCounts {
    this.counted(() => this.inTransaction.immediate(() => this.searchIndex.indexPending()));
    const counts = this.counted(() => scrubDatabase(this.db, keys, senders));
    this.searchIndex.forgetWords();
    return counts;
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
    await this.wal?.close();
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
      case "rewriteEntries": {
        const sid = this.requireSid(change.session.id);
        const seqs = change.entries.map((e) => e.seq);
        for (const seq of seqs) {
          this.sql.get(SQL.deleteEntryAt).run(sid, seq);
          this.sql.get(SQL.deleteJournalAt).run(sid, seq);
        }
        this.searchIndex.removeSeqs(sid, seqs);
        const insert = this.sql.get(SQL.insertEntry);
        for (const entry of change.entries) insert.run(entryInsertParams(sid, entry));
        this.searchIndex.add(sid, change.entries);
        this.sql.get(SQL.updateSession).run(sessionUpdateParams(sid, change.session));
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
    return this.sids.get(id);
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
