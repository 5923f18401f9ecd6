import { statSync } from "node:fs";
import type Database from "better-sqlite3";
import type { Entry } from "../../model/entry.js";
import { SessiondError } from "../../model/errors.js";
import type { Session } from "../../model/session.js";
import type {
  Expectation,
  ForeignChanges,
  GroupOutcome,
  KeptContext,
  KeyHead,
  StoreDriver,
  WriteChange,
  WriteGroup,
} from "../driver.js";
import { freezeInPlace } from "../frozen.js";
import { RecentMap } from "../recent-map.js";
import type { NormalisedQuery } from "../session-query.js";
import { listSessionsSql, scanSessionsSql } from "../sql/list-sql.js";
import {
  type EntryRow,
  entryFromRow,
  entryInsertParams,
  type SessionRow,
  sessionAfterAppendParams,
  sessionFromRow,
  sessionInsertParams,
  sessionUpdateParams,
} from "../sql/rows.js";
import type { Durability, EntryRange, SessionScan } from "../store.js";
import { Checkpointer } from "./checkpointer.js";
import { InboxTable } from "./inbox-table.js";
import { JournalFold } from "./journal-fold.js";
import { SqliteSearchIndex } from "./search-index.js";
import {
  asStoreError,
  isFsyncError,
  isIoError,
  openDatabase,
  SQL,
  Statements,
  walSyncFailed,
} from "./sqlite-sql.js";
import { WalSync } from "./wal-sync.js";

export interface SqliteDriverOptions {
  path: string;
  durability: Durability;
  busyTimeoutMs: number;
  pageCacheKb: number;
  foldThreshold: number;
  journalMinBatch: number;
  idleFoldMs: number;
  /** Called when a checkpoint's fsync failed: the store stops. */
  onFailure: (error: unknown) => void;
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

const NONE: ForeignChanges = { kind: "none" };
const ALL: ForeignChanges = { kind: "all" };
const OK: GroupOutcome = { ok: true };

/**
 * One SQLite file in WAL mode. Reads go straight to the file. A batch commits as one IMMEDIATE
 * transaction; a big one writes its entries through a journal table that is folded into `entries` in key
 * order later (one pass instead of a page per session per commit). Another process may write the file:
 * `PRAGMA data_version` tells, and a batch that finds it changed checks every group's expectations.
 */
export class SqliteDriver implements StoreDriver {
  readonly backend = "sqlite";
  readonly path: string;
  readonly db: Database.Database;
  readonly durableBarrier?: () => Promise<void>;
  /** In WAL mode on a file: makes durable commits durable without blocking the thread. */
  readonly walSync: WalSync | undefined;
  readonly checkpointer: Checkpointer | undefined;
  /** Search, written in the same transactions as the entries. */
  readonly searchIndex: SqliteSearchIndex;
  /** The inbox of admitted inputs, a table of this file committed with the groups (`WriteGroup.inbox`). */
  readonly inbox: InboxTable;
  private readonly sql: Statements;
  private readonly sids = new RecentMap<string, number>(20_000);
  private readonly dataVersionQuery: Database.Statement;
  private dataVersion = 0;
  /** Another process committed since the core last asked (seen inside a commit). */
  private foreignSeen = false;
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

  constructor(private readonly options: SqliteDriverOptions) {
    this.path = options.path;
    this.db = openDatabase(options.path, options.durability, options);
    if (options.path !== ":memory:" && this.db.pragma("journal_mode", { simple: true }) === "wal") {
      this.walSync = new WalSync(`${options.path}-wal`);
      this.db.pragma("synchronous = NORMAL");
      // Halfway to the backstop the writer finishes the thread's checkpoint, so the WAL starts over
      // before it gets there even when the thread's checkpoints run back to back.
      this.checkpointer = new Checkpointer(
        options.path,
        options.onFailure,
        200,
        BACKSTOP_CHECKPOINT_PAGES / 2,
      );
      this.db.pragma(`wal_autocheckpoint = ${BACKSTOP_CHECKPOINT_PAGES}`);
      this.db.pragma(`journal_size_limit = ${WAL_LIMIT_BYTES}`);
      const walSync = this.walSync;
      this.durableBarrier = () =>
        walSync.sync().catch((error: unknown) => Promise.reject(walSyncFailed(this.path, error)));
    }
    this.sql = new Statements(this.db);
    this.inbox = new InboxTable(this.db);
    this.searchIndex = new SqliteSearchIndex(this.db, this.sql);
    this.dataVersionQuery = this.db.prepare(SQL.dataVersion).pluck();
    this.synchronous = options.durability === "strict" && !this.walSync ? "FULL" : "NORMAL";
    this.inTransaction = this.db.transaction((run: () => unknown) => run());
    this.journal = new JournalFold(this.db, this.sql, this.inTransaction, {
      path: options.path,
      foldThreshold: options.foldThreshold,
      idleFoldMs: options.idleFoldMs,
      committed: () => this.walSync?.committed(),
      search: this.searchIndex,
    });
    // The usual case: every group commits, and none pays for a savepoint of its own.
    this.fast = this.db.transaction((groups: readonly WriteGroup[]) => {
      this.begin(groups);
      const outcomes = groups.map((group) => this.applyGroup(group));
      this.journal.foldIfFull();
      return outcomes;
    });
    // After any group failed, the batch is rolled back and run again with a savepoint per group, so the
    // failed group leaves nothing behind and the others still commit; the groups after it are checked.
    this.careful = this.db.transaction((groups: readonly WriteGroup[]) => {
      this.begin(groups);
      const outcomes = groups.map((group): GroupOutcome => {
        try {
          let outcome = OK;
          this.inTransaction(() => {
            outcome = this.applyGroup(group);
          });
          return outcome;
        } catch (error) {
          this.verifying = true;
          this.sids.clear();
          this.searchIndex.forgetWords();
          return { ok: false, error: asStoreError(error) };
        }
      });
      this.journal.foldIfFull();
      return outcomes;
    });
  }

  // ——— reads ———

  loadKey(key: string): KeyHead {
    const row = this.sql.get(SQL.current).get(key) as SessionRow | undefined;
    const lastGeneration = (this.sql.get(SQL.lastGeneration).get(key) as { g: number | null }).g ?? 0;
    if (!row) return { lastGeneration };
    this.sids.set(row.id, row.sid);
    return { current: sessionFromRow(row), lastGeneration };
  }

  generations(key: string): Session[] {
    return (this.sql.get(SQL.generations).all(key) as SessionRow[]).map((row) => this.fromRow(row));
  }

  sessionById(id: string): Session | undefined {
    const row = this.sql.get(SQL.byId).get(id) as SessionRow | undefined;
    return row && this.fromRow(row);
  }

  findIdempotent(session: Session, keys: readonly string[]): Map<string, Entry> {
    const found = new Map<string, Entry>();
    const sid = this.sidOf(session.id);
    if (sid === undefined) return found;
    for (const key of keys) {
      const row = this.sql.get(SQL.idempotent).get({ sid, key }) as EntryRow | undefined;
      if (row) found.set(key, entryFromRow(session.id, row));
    }
    return found;
  }

  readEntries(session: Session, range: EntryRange & { order: "asc" | "desc" }): Entry[] {
    const sid = this.sidOf(session.id);
    if (sid === undefined) return [];
    const rows = this.sql.get(range.order === "desc" ? SQL.rangeDesc : SQL.rangeAsc).all({
      sid,
      after: range.afterSeq ?? 0,
      before: range.beforeSeq ?? Number.MAX_SAFE_INTEGER,
      limit: range.limit ?? -1,
    }) as EntryRow[];
    return rows.map((e) => entryFromRow(session.id, e));
  }

  loadKept(session: Session): KeptContext {
    const sid = this.sidOf(session.id);
    if (sid === undefined) return { entries: [] };
    const rows = this.sql.get(SQL.kept).all({ sid, from: session.contextFromSeq }) as EntryRow[];
    // Parsed for this call and held by nothing else: frozen where they are, the core's cache keeps them
    // instead of copying each one.
    const entries = rows.map((e) => freezeInPlace(entryFromRow(session.id, e)));
    const kept: KeptContext = { entries, frozen: true };
    if (session.lastCompactionSeq !== undefined) {
      const row = this.sql.get(SQL.entryAt).get({ sid, seq: session.lastCompactionSeq }) as
        | EntryRow
        | undefined;
      const entry = row && entryFromRow(session.id, row);
      if (entry?.type === "compaction") kept.summary = freezeInPlace(entry);
    }
    return kept;
  }

  list(query: NormalisedQuery): Session[] {
    const { sql, params } = listSessionsSql(query);
    return (this.sql.get(sql).all(params) as SessionRow[]).map(sessionFromRow);
  }

  scan(scan: SessionScan & { limit: number }): Session[] {
    const { sql, params } = scanSessionsSql(scan);
    return (this.sql.get(sql).all(params) as SessionRow[]).map(sessionFromRow);
  }

  foreignChanges(): ForeignChanges {
    const changed = this.versionChanged() || this.foreignSeen;
    this.foreignSeen = false;
    return changed ? ALL : NONE;
  }

  // ——— writes ———

  commit(groups: readonly WriteGroup[], durable: boolean): GroupOutcome[] {
    if (this.journal.corrupt) throw this.journal.corrupt;
    if (!this.walSync)
      this.setSynchronous(durable || this.options.durability === "strict" ? "FULL" : "NORMAL");
    try {
      let outcomes: GroupOutcome[];
      try {
        outcomes = this.fast.immediate(groups);
      } catch {
        this.sids.clear();
        this.searchIndex.forgetWords();
        outcomes = this.careful.immediate(groups);
      }
      this.walSync?.committed();
      return outcomes;
    } catch (error) {
      this.sids.clear();
      this.searchIndex.forgetWords();
      // SQLite's own fsync (synchronous=FULL without WalSync, a checkpoint inside COMMIT) failing is a
      // failed fsync as well: the writer stops for STORE_FAILED.
      throw isFsyncError(error) ? walSyncFailed(this.path, error) : asStoreError(error);
    } finally {
      this.journal.scheduleIdleFold();
      this.finishCheckpoint();
      this.checkpointer?.request();
    }
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
      if (isIoError(cause)) this.options.onFailure(walSyncFailed(this.path, cause));
    }
    this.checkpointer.finished();
  }

  /** The WAL passed its bound while the thread's checkpoint held the writer's own off: waits for that one. */
  private walOverLimit(): boolean {
    if (!this.checkpointer?.busy) return false;
    const size = statSync(`${this.path}-wal`, { throwIfNoEntry: false })?.size ?? 0;
    return size > WAL_LIMIT_BYTES && this.checkpointer.waitIdle(CHECKPOINT_WAIT_MS);
  }

  /** The inline fsync of a small durable batch. */
  syncNow(): void {
    try {
      this.walSync?.syncNow();
    } catch (error) {
      throw walSyncFailed(this.path, error);
    }
  }

  /**
   * Everything committed so far reaches the disk: the WAL's fsync, then a checkpoint. The fsync is not
   * left to the checkpoint, which syncs nothing when it has nothing to copy or the checkpoint thread's
   * holds it off (busy, which SQLite reports as a result, not an error).
   */
  async sync(): Promise<void> {
    if (this.walSync && this.durableBarrier) {
      this.walSync.committed();
      await this.durableBarrier();
    }
    try {
      this.db.pragma("wal_checkpoint(PASSIVE)");
    } catch (error) {
      const cause = (error as { cause?: unknown }).cause ?? error;
      throw isIoError(cause) ? walSyncFailed(this.path, cause) : asStoreError(error);
    }
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
    this.db.close();
  }

  /** Inside the transaction, after BEGIN IMMEDIATE got the write lock: what another process did shows now. */
  private begin(groups: readonly WriteGroup[]): void {
    this.verifying = this.versionChanged();
    if (this.verifying) this.foreignSeen = true;
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

  private fromRow(row: SessionRow): Session {
    this.sids.set(row.id, row.sid);
    return sessionFromRow(row);
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

  private versionChanged(): boolean {
    const version = this.dataVersionQuery.get() as number;
    if (version === this.dataVersion) return false;
    this.dataVersion = version;
    return true;
  }

  private setSynchronous(mode: "FULL" | "NORMAL"): void {
    if (mode === this.synchronous) return;
    this.db.pragma(`synchronous = ${mode}`);
    this.synchronous = mode;
  }
}
