import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import type { Entry, EntryInput, ResetCause } from "../../model/entry.js";
import { parseEntryInput } from "../../model/entry-schema.js";
import { isSessiondError, SessiondError } from "../../model/errors.js";
import type { Session, SessionInit, StoredContext } from "../../model/session.js";
import { ContextCache } from "../context-cache.js";
import { checkRange } from "../entry-range.js";
import { GroupCommit, INLINE_SYNC_MAX_BATCH, messageOf } from "../group-commit.js";
import {
  cloneSession,
  currentNotDeletable,
  newSession,
  planAppend,
  planArchive,
  planRekey,
  planReset,
  sessionNotFound,
} from "../session-log.js";
import { applyPatch, requireInit } from "../session-patch.js";
import { encodeCursor, normaliseQuery, normaliseScan } from "../session-query.js";
import type {
  AppendOptions,
  AppendResult,
  ArchiveResult,
  DeleteResult,
  Durability,
  EntryRange,
  ResetResult,
  SessionPage,
  SessionPatch,
  SessionQuery,
  SessionScan,
  Store,
} from "../store.js";
import { inputBytes } from "../write-bytes.js";
import { Checkpointer } from "./checkpointer.js";
import { listSessionsSql, scanSessionsSql } from "./list-sql.js";
import {
  type EntryRow,
  entryFromRow,
  entryInsertParams,
  type SessionRow,
  sessionAfterAppendParams,
  sessionFromRow,
  sessionInsertParams,
  sessionUpdateParams,
} from "./rows.js";
import { migrate } from "./schema.js";
import { WalSync } from "./wal-sync.js";

export interface SqliteStoreOptions {
  path: string;
  /**
   * `strict` (default): an append resolves once it is on disk (the WAL fsync'd after the commit, off the
   * event loop). `relaxed`: synchronous=NORMAL, no fsync per commit.
   */
  durability?: Durability;
  /** How long a commit waits to gather appends; 0 (default) commits on the next turn of the event loop. */
  commitIntervalMs?: number;
  /** The most write operations in one transaction (default 2,000). */
  maxBatch?: number;
  /** How many sessions' current rows the writer keeps in memory (default 10,000). */
  sessionCacheSize?: number;
  /** How long to wait for another process's write lock before failing (default 5,000 ms). */
  busyTimeoutMs?: number;
  /** Fold the journal into `entries` once it holds this many rows (default 1,000). */
  foldThreshold?: number;
  /**
   * Batches of at least this many operations write through the journal (default 8); smaller ones
   * write straight into `entries`, where a row costs one write instead of two.
   */
  journalMinBatch?: number;
  /** Fold the journal after this long without writes (default 200 ms). */
  idleFoldMs?: number;
  /** How many bytes of active sessions' kept entries to hold in memory for context loads (default 16 MiB). */
  contextCacheBytes?: number;
  /**
   * SQLite's page cache, KiB (default 4,096; better-sqlite3's own default is 16,000). The kernel caches the
   * file too, and the session and context caches above hold what is read most, so a bigger one mostly
   * duplicates memory.
   */
  pageCacheKb?: number;
  /** The most bytes of appends waiting for the writer before appends fail with STORE_BUSY (default 64 MiB). */
  maxQueuedBytes?: number;
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

interface Current {
  sid: number;
  session: Session;
}

/** better-sqlite3 caches nothing itself; a statement per distinct SQL text is prepared once. */
class Statements {
  private readonly cache = new Map<string, Database.Statement>();
  constructor(private readonly db: Database.Database) {}
  get(sql: string): Database.Statement {
    let statement = this.cache.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.cache.set(sql, statement);
    }
    return statement;
  }
}

const ENTRY_COLUMNS = "seq, id, ts, idem_key, data";
/** The same SELECT over folded entries and the journal not yet folded. */
const bothTables = (where: string) =>
  `SELECT ${ENTRY_COLUMNS} FROM entries WHERE ${where} UNION ALL SELECT ${ENTRY_COLUMNS} FROM journal WHERE ${where}`;

export const SQL = {
  current: "SELECT * FROM sessions WHERE key = ? AND state = 'active'",
  byId: "SELECT * FROM sessions WHERE id = ?",
  generations: "SELECT * FROM sessions WHERE key = ? ORDER BY generation DESC",
  lastGeneration: "SELECT max(generation) AS g FROM sessions WHERE key = ?",
  insertSession: `INSERT INTO sessions (id, key, generation, state, agent, channel, chat_type, created_by, title,
    created_at, last_activity_at, entry_count, overrides) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  updateSession: `UPDATE sessions SET state = ?, title = ?, created_at = ?, last_activity_at = ?, archived_at = ?,
    entry_count = ?, message_count = ?, approx_tokens = ?, context_from_seq = ?, last_compaction_seq = ?, overrides = ?
    WHERE sid = ?`,
  // What an append changes, and only that: an UPDATE naming `state` would also rewrite the entry of the
  // partial index on (key) WHERE state = 'active', a page write per append for nothing.
  updateAfterAppend: `UPDATE sessions SET title = ?, created_at = ?, last_activity_at = ?, entry_count = ?,
    message_count = ?, approx_tokens = ?, context_from_seq = ?, last_compaction_seq = ? WHERE sid = ?`,
  idempotent: bothTables("sid = @sid AND idem_key = @key"),
  insertEntry: "INSERT INTO entries (sid, seq, id, ts, type, idem_key, data) VALUES (?, ?, ?, ?, ?, ?, ?)",
  insertJournal: "INSERT INTO journal (sid, seq, id, ts, type, idem_key, data) VALUES (?, ?, ?, ?, ?, ?, ?)",
  entryAt: bothTables("sid = @sid AND seq = @seq"),
  kept: `${bothTables("sid = @sid AND seq >= @from AND type != 'compaction'")} ORDER BY seq`,
  rangeAsc: `${bothTables("sid = @sid AND seq > @after AND seq < @before")} ORDER BY seq ASC LIMIT @limit`,
  rangeDesc: `${bothTables("sid = @sid AND seq > @after AND seq < @before")} ORDER BY seq DESC LIMIT @limit`,
  countEntries:
    "SELECT (SELECT count(*) FROM entries WHERE sid = @sid) + (SELECT count(*) FROM journal WHERE sid = @sid) AS n",
  deleteEntries: "DELETE FROM entries WHERE sid = ?",
  deleteJournal: "DELETE FROM journal WHERE sid = ?",
  deleteSession: "DELETE FROM sessions WHERE sid = ?",
  renumber: "UPDATE sessions SET key = ?, generation = ? WHERE sid = ?",
  journalSize: "SELECT count(*) AS n, max(rowid) AS last FROM journal",
  foldInto: `INSERT INTO entries (sid, seq, id, ts, type, idem_key, data)
    SELECT sid, seq, id, ts, type, idem_key, data FROM journal WHERE rowid <= ? ORDER BY sid, seq`,
  foldDelete: "DELETE FROM journal WHERE rowid <= ?",
  dataVersion: "PRAGMA data_version",
  duplicated: `SELECT s.id, j.seq, j.idem_key FROM journal j JOIN sessions s ON s.sid = j.sid
    WHERE EXISTS (SELECT 1 FROM entries e WHERE e.sid = j.sid AND (e.seq = j.seq OR e.idem_key = j.idem_key))
    LIMIT 1`,
} as const;

/**
 * The embedded default: one SQLite file in WAL mode. Reads go straight to the file; every write goes
 * through one group-commit writer.
 */
export class SqliteStore implements Store {
  readonly backend = "sqlite";
  readonly durability: Durability;
  readonly path: string;
  private readonly db: Database.Database;
  private readonly sql: Statements;
  private readonly writer: GroupCommit;
  private readonly cache = new Map<string, Current>();
  private readonly contexts: ContextCache;
  private readonly cacheSize: number;
  private dataVersion = 0;
  private synchronous: "FULL" | "NORMAL";
  private closed = false;
  /** Rows written to the journal since the last fold (approximate: other processes write too). */
  private journalRows: number;
  private readonly foldThreshold: number;
  private readonly journalMinBatch: number;
  /** Whether the batch being committed writes through the journal. */
  private viaJournal = false;
  private readonly idleFoldMs: number;
  private idleFold: NodeJS.Timeout | undefined;
  private lastWriteAt = 0;
  private readonly dataVersionQuery: Database.Statement;
  /** In WAL mode on a file: makes durable commits durable without blocking the thread. */
  private readonly walSync: WalSync | undefined;
  private readonly checkpointer: Checkpointer | undefined;
  /** Set when a fold found duplicate entries: every write is refused with it. */
  private corrupt: SessiondError | undefined;

  constructor(options: SqliteStoreOptions) {
    this.path = options.path;
    this.durability = options.durability ?? "strict";
    this.cacheSize = options.sessionCacheSize ?? 10_000;
    this.contexts = new ContextCache(options.contextCacheBytes);
    this.db = openDatabase(options.path, this.durability, {
      busyTimeoutMs: options.busyTimeoutMs ?? 5000,
      pageCacheKb: options.pageCacheKb ?? 4096,
    });
    if (options.path !== ":memory:" && this.db.pragma("journal_mode", { simple: true }) === "wal") {
      this.walSync = new WalSync(`${options.path}-wal`);
      this.db.pragma("synchronous = NORMAL");
      this.checkpointer = new Checkpointer(options.path, (error) => this.writer.failStop(error));
      this.db.pragma(`wal_autocheckpoint = ${BACKSTOP_CHECKPOINT_PAGES}`);
    }
    this.sql = new Statements(this.db);
    this.dataVersionQuery = this.db.prepare(SQL.dataVersion).pluck();
    this.synchronous = this.durability === "strict" && !this.walSync ? "FULL" : "NORMAL";
    this.foldThreshold = options.foldThreshold ?? 1000;
    this.idleFoldMs = options.idleFoldMs ?? 200;
    this.journalMinBatch = options.journalMinBatch ?? 8;
    this.journalRows = (this.sql.get(SQL.journalSize).get() as { n: number }).n;
    const savepoint = this.db.transaction((op: () => unknown) => op());
    const foldIfFull = () => {
      if (this.journalRows < this.foldThreshold) return;
      try {
        savepoint(() => this.foldJournal());
      } catch (error) {
        // A duplicate makes the store refuse writes from the next commit on (foldJournal recorded it);
        // anything else leaves the rows in the journal, where readers find them, for the next batch.
        if (isSessiondError(error, "STORE_CORRUPT")) return;
      }
    };
    // The usual case: every op succeeds, and no op pays for a savepoint of its own.
    const fast = this.db.transaction((ops: ReadonlyArray<() => unknown>) => {
      // Inside the transaction, after BEGIN IMMEDIATE got the write lock: a check before it could miss a
      // commit another process made while this one waited for the lock, and number entries it had taken.
      this.checkOtherWriters();
      this.viaJournal = ops.length >= this.journalMinBatch;
      const results = ops.map((op) => ({ ok: true as const, value: op() }));
      foldIfFull();
      return results;
    });
    // After any op failed, the batch is rolled back and run again with a savepoint per op, so the
    // failed op leaves nothing behind and the others still commit.
    const careful = this.db.transaction((ops: ReadonlyArray<() => unknown>) => {
      this.checkOtherWriters();
      this.viaJournal = ops.length >= this.journalMinBatch;
      const results = ops.map((op) => {
        try {
          return { ok: true as const, value: savepoint(op) };
        } catch (error) {
          this.forgetAll();
          return { ok: false as const, error: asStoreError(error) };
        }
      });
      foldIfFull();
      return results;
    });
    const batch = {
      immediate: (ops: ReadonlyArray<() => unknown>) => {
        try {
          return fast.immediate(ops);
        } catch {
          // What this process remembers of sessions includes the rolled-back writes.
          this.forgetAll();
          return careful.immediate(ops);
        }
      },
    };
    this.writer = new GroupCommit(
      (ops, durable) => {
        if (this.corrupt) throw this.corrupt;
        if (!this.walSync) this.setSynchronous(durable || this.durability === "strict" ? "FULL" : "NORMAL");
        try {
          const results = batch.immediate(ops);
          this.walSync?.committed();
          if (durable && ops.length < INLINE_SYNC_MAX_BATCH) this.syncWalNow();
          return results;
        } catch (error) {
          this.forgetAll();
          // SQLite's own fsync (synchronous=FULL without WalSync, a checkpoint inside COMMIT) failing is
          // a failed fsync as well: GroupCommit stops the writer for STORE_FAILED.
          throw isFsyncError(error) ? walSyncFailed(this.path, error) : asStoreError(error);
        } finally {
          this.scheduleIdleFold();
          this.checkpointer?.request();
        }
      },
      {
        intervalMs: options.commitIntervalMs ?? 0,
        maxBatch: options.maxBatch ?? 2000,
        ...(this.walSync ? { durableBarrier: () => this.syncWal() } : {}),
        ...(options.maxQueuedBytes === undefined ? {} : { maxQueuedBytes: options.maxQueuedBytes }),
      },
    );
  }

  append(key: string, inputs: EntryInput[], options?: AppendOptions): Promise<AppendResult> {
    const init = options?.init;
    let parsed: EntryInput[];
    try {
      parsed = inputs.map(parseEntryInput);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.writer.submit(
      () => {
        const existing = this.current(key);
        const session = existing ? cloneSession(existing.session) : this.nextSession(key, init);
        const findIdempotent = (_s: Session, k: string) => {
          if (!existing) return undefined;
          const row = this.sql.get(SQL.idempotent).get({ sid: existing.sid, key: k }) as EntryRow | undefined;
          return row && entryFromRow(session.id, row);
        };
        const plan = planAppend(session, parsed, { findIdempotent }, Date.now(), options?.expectSessionId);
        // A new session is stored once the plan holds (a plan that throws leaves nothing to roll back).
        const current = existing ?? this.insertSession(session);
        if (plan.fresh.length > 0) {
          const insert = this.sql.get(this.viaJournal ? SQL.insertJournal : SQL.insertEntry);
          for (const entry of plan.fresh) insert.run(entryInsertParams(current.sid, entry));
          if (this.viaJournal) this.journalRows += plan.fresh.length;
          this.sql.get(SQL.updateAfterAppend).run(sessionAfterAppendParams(current.sid, session));
          this.remember(key, { sid: current.sid, session });
          this.contexts.appended(key, current.sid, session, plan.fresh);
        }
        return { session: cloneSession(session), entries: plan.entries, created: plan.created };
      },
      (options?.durability ?? this.durability) === "strict",
      inputBytes(parsed),
    );
  }

  async getSession(key: string): Promise<Session | undefined> {
    return this.read(() => {
      // As loadContext: what this process remembers, unless another process wrote since.
      this.checkOtherWriters();
      const current = this.current(key);
      return current && cloneSession(current.session);
    });
  }

  async getSessionById(id: string): Promise<Session | undefined> {
    return this.read(() => {
      const row = this.sql.get(SQL.byId).get(id) as SessionRow | undefined;
      return row && sessionFromRow(row);
    });
  }

  async listSessions(query?: SessionQuery): Promise<SessionPage> {
    const q = normaliseQuery(query);
    return this.read(() => {
      const { sql, params } = listSessionsSql(q);
      const rows = this.sql.get(sql).all(params) as SessionRow[];
      const sessions = rows.slice(0, q.limit).map(sessionFromRow);
      const last = sessions.at(-1);
      return rows.length > q.limit && last
        ? { sessions, nextCursor: encodeCursor(q.sort, last) }
        : { sessions };
    });
  }

  async generations(key: string): Promise<Session[]> {
    return this.read(() => (this.sql.get(SQL.generations).all(key) as SessionRow[]).map(sessionFromRow));
  }

  async readEntries(sessionId: string, range?: EntryRange): Promise<Entry[]> {
    const r = checkRange(range);
    return this.read(() => {
      const row = this.sql.get(SQL.byId).get(sessionId) as SessionRow | undefined;
      if (!row) return [];
      const rows = this.sql.get(r.order === "desc" ? SQL.rangeDesc : SQL.rangeAsc).all({
        sid: row.sid,
        after: r.afterSeq ?? 0,
        before: r.beforeSeq ?? Number.MAX_SAFE_INTEGER,
        limit: r.limit ?? -1,
      }) as EntryRow[];
      return rows.map((e) => entryFromRow(row.id, e));
    });
  }

  async loadContext(key: string): Promise<StoredContext | undefined> {
    return this.read(() => {
      this.checkOtherWriters();
      const current = this.current(key);
      if (!current) return undefined;
      const { sid, session } = current;
      const hit = this.contexts.get(key, sid, session);
      if (hit) return { session: cloneSession(session), ...hit };
      const rows = this.sql.get(SQL.kept).all({ sid, from: session.contextFromSeq }) as EntryRow[];
      const context: StoredContext = {
        session: cloneSession(session),
        entries: rows.map((e) => entryFromRow(session.id, e)),
      };
      if (session.lastCompactionSeq !== undefined) {
        const summary = this.sql.get(SQL.entryAt).get({ sid, seq: session.lastCompactionSeq }) as
          | EntryRow
          | undefined;
        const entry = summary && entryFromRow(session.id, summary);
        if (entry?.type === "compaction") context.summary = entry;
      }
      this.contexts.put(key, sid, session, context);
      return context;
    });
  }

  updateSession(key: string, patch: SessionPatch): Promise<Session> {
    return this.writer.submit(() => {
      const current = this.current(key);
      if (!current) throw sessionNotFound(key);
      const session = applyPatch(current.session, patch);
      this.sql.get(SQL.updateSession).run(sessionUpdateParams(current.sid, session));
      this.remember(key, { sid: current.sid, session });
      return cloneSession(session);
    });
  }

  reset(key: string, cause: ResetCause, init?: SessionInit): Promise<ResetResult> {
    return this.writer.submit(() => {
      const current = this.current(key);
      if (!current) throw sessionNotFound(key);
      const archived = cloneSession(current.session);
      const { resetEntry, next } = planReset(archived, cause, init, Date.now());
      this.sql.get(SQL.insertEntry).run(entryInsertParams(current.sid, resetEntry));
      this.sql.get(SQL.updateSession).run(sessionUpdateParams(current.sid, archived));
      this.forget(key);
      const created = this.insertSession(next);
      return { archived: cloneSession(archived), resetEntry, current: cloneSession(created.session) };
    });
  }

  archive(key: string, cause: ResetCause): Promise<ArchiveResult> {
    return this.writer.submit(() => {
      const current = this.current(key);
      if (!current) throw sessionNotFound(key);
      const archived = cloneSession(current.session);
      const resetEntry = planArchive(archived, cause, Date.now());
      this.sql.get(SQL.insertEntry).run(entryInsertParams(current.sid, resetEntry));
      this.sql.get(SQL.updateSession).run(sessionUpdateParams(current.sid, archived));
      this.forget(key);
      return { archived: cloneSession(archived), resetEntry };
    });
  }

  deleteGeneration(sessionId: string): Promise<DeleteResult> {
    return this.writer.submit(() => {
      const row = this.sql.get(SQL.byId).get(sessionId) as SessionRow | undefined;
      if (!row) return { sessions: 0, entries: 0 };
      if (row.state === "active") throw currentNotDeletable(sessionId);
      return { sessions: 1, entries: this.deleteRow(row) };
    });
  }

  rekey(from: string, to: string): Promise<{ moved: number }> {
    return this.writer.submit(() => {
      if (from === to) return { moved: 0 };
      const fromRows = this.sql.get(SQL.generations).all(from) as SessionRow[];
      const toRows = this.sql.get(SQL.generations).all(to) as SessionRow[];
      const sids = new Map([...fromRows, ...toRows].map((r) => [r.id, r.sid]));
      const plan = planRekey(fromRows.map(sessionFromRow), toRows.map(sessionFromRow), to, Date.now());
      if (plan.archived) {
        // Archived before it moves, so the key never has two current sessions.
        const sid = sids.get(plan.archived.session.id)!;
        this.sql.get(SQL.insertEntry).run(entryInsertParams(sid, plan.archived.resetEntry));
        this.sql.get(SQL.updateSession).run(sessionUpdateParams(sid, plan.archived.session));
      }
      // Negative generations first, so renumbering never collides with the unique (key, generation) index.
      for (const session of plan.sessions)
        this.sql.get(SQL.renumber).run(to, -session.generation, sids.get(session.id));
      for (const session of plan.sessions) {
        const sid = sids.get(session.id)!;
        this.sql.get(SQL.renumber).run(to, session.generation, sid);
        this.sql.get(SQL.updateSession).run(sessionUpdateParams(sid, session));
      }
      this.forget(from);
      this.forget(to);
      return { moved: fromRows.length };
    });
  }

  async scanSessions(scan: SessionScan): Promise<Session[]> {
    const s = normaliseScan(scan);
    return this.read(() => {
      const { sql, params } = scanSessionsSql(s);
      return (this.sql.get(sql).all(params) as SessionRow[]).map(sessionFromRow);
    });
  }

  /** Everything committed so far reaches the disk: a checkpoint syncs the WAL first. */
  async sync(): Promise<void> {
    await this.writer.flush();
    // After a failed fsync nothing can be promised to be on disk, even if this checkpoint's fsync passes.
    if (this.writer.failed) throw this.writer.failed;
    try {
      this.read(() => this.db.pragma("wal_checkpoint(PASSIVE)"));
    } catch (error) {
      const cause = (error as { cause?: unknown }).cause ?? error;
      throw isIoError(cause) ? this.writer.failStop(walSyncFailed(this.path, cause)) : error;
    }
  }

  delete(key: string): Promise<DeleteResult> {
    return this.writer.submit(() => {
      const rows = this.sql.get(SQL.generations).all(key) as SessionRow[];
      let entries = 0;
      for (const row of rows) entries += this.deleteRow(row);
      this.forget(key);
      return { sessions: rows.length, entries };
    });
  }

  flush(): Promise<void> {
    return this.writer.flush();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    clearTimeout(this.idleFold);
    await this.writer.submit(() => this.foldJournal()).catch(() => undefined);
    await this.writer.close();
    await this.walSync?.close();
    await this.checkpointer?.close();
    clearTimeout(this.idleFold);
    this.closed = true;
    this.db.close();
  }

  /** Calls `listener` with the operations in each transaction this store commits (for metrics). */
  observeCommits(listener: (operations: number) => void): () => void {
    return this.writer.onBatch(listener);
  }

  /** Sizes of recent commit batches. */
  recentBatchSizes(): readonly number[] {
    return this.writer.recentBatchSizes();
  }

  /** Deletes a session row and its entries in both tables; returns how many entries went. */
  private deleteRow(row: SessionRow): number {
    const entries = (this.sql.get(SQL.countEntries).get({ sid: row.sid }) as { n: number }).n;
    this.sql.get(SQL.deleteEntries).run(row.sid);
    this.sql.get(SQL.deleteJournal).run(row.sid);
    this.sql.get(SQL.deleteSession).run(row.sid);
    return entries;
  }

  /** The inline fsync of a small durable batch; a failure stops the writer (fail-stop, see GroupCommit). */
  private syncWalNow(): void {
    try {
      this.walSync?.syncNow();
    } catch (error) {
      throw walSyncFailed(this.path, error);
    }
  }

  private async syncWal(): Promise<void> {
    try {
      await this.walSync?.sync();
    } catch (error) {
      throw walSyncFailed(this.path, error);
    }
  }

  private setSynchronous(mode: "FULL" | "NORMAL"): void {
    if (mode === this.synchronous) return;
    this.db.pragma(`synchronous = ${mode}`);
    this.synchronous = mode;
  }

  /** Moves the journal into `entries`, in key order: one pass per fold instead of a page per session per commit. */
  private foldJournal(): void {
    const { n, last } = this.sql.get(SQL.journalSize).get() as { n: number; last: number | null };
    if (n > 0 && last !== null) {
      try {
        this.sql.get(SQL.foldInto).run(last);
      } catch (error) {
        if (!isConstraintError(error)) throw error;
        throw this.foundDuplicates(error);
      }
      this.sql.get(SQL.foldDelete).run(last);
    }
    this.journalRows = 0;
  }

  /**
   * A fold that finds an entry in both tables (two processes numbered the same seq, before schema v2):
   * the log is ambiguous, so the store refuses writes from then on, naming what it found; reads go on.
   */
  private foundDuplicates(error: unknown): SessiondError {
    const found = this.sql.get(SQL.duplicated).get() as
      | { id: string; seq: number; idem_key: string | null }
      | undefined;
    const what = found
      ? `session ${found.id} has entry ${found.seq}${found.idem_key === null ? "" : ` or idempotency key ${JSON.stringify(found.idem_key)}`} twice`
      : "an entry is stored twice";
    this.corrupt ??= new SessiondError(
      "STORE_CORRUPT",
      `the database holds duplicate entries (${this.path}): ${what}; it refuses writes until repaired`,
      { cause: error, ...(found ? { details: { sessionId: found.id, seq: found.seq } } : {}) },
    );
    return this.corrupt;
  }

  /** One timer, pushed back by activity rather than re-armed on every commit. */
  private scheduleIdleFold(): void {
    this.lastWriteAt = performance.now();
    if (this.idleFold || this.journalRows === 0 || this.closed) return;
    const check = () => {
      const quiet = performance.now() - this.lastWriteAt;
      if (quiet < this.idleFoldMs) {
        this.idleFold = setTimeout(check, this.idleFoldMs - quiet).unref();
        return;
      }
      this.idleFold = undefined;
      if (this.journalRows > 0 && !this.closed)
        this.writer.submit(() => this.foldJournal()).catch(() => undefined);
    };
    this.idleFold = setTimeout(check, this.idleFoldMs).unref();
  }

  private current(key: string): Current | undefined {
    const cached = this.cache.get(key);
    if (cached) return cached;
    const row = this.sql.get(SQL.current).get(key) as SessionRow | undefined;
    if (!row) return undefined;
    const current = { sid: row.sid, session: sessionFromRow(row) };
    this.remember(key, current);
    return current;
  }

  /** The session an append to a key without one starts (stored by insertSession). */
  private nextSession(key: string, init: SessionInit | undefined): Session {
    const last = (this.sql.get(SQL.lastGeneration).get(key) as { g: number | null }).g ?? 0;
    return newSession(key, requireInit(key, init), last + 1, Date.now());
  }

  private insertSession(session: Session): Current {
    const info = this.sql.get(SQL.insertSession).run(sessionInsertParams(session));
    const current = { sid: Number(info.lastInsertRowid), session };
    this.remember(session.key, current);
    return current;
  }

  private forget(key: string): void {
    this.cache.delete(key);
    this.contexts.drop(key);
  }

  /** What this process remembers may include rolled-back writes, or miss another process's. */
  private forgetAll(): void {
    this.cache.clear();
    this.contexts.clear();
  }

  private remember(key: string, current: Current): void {
    this.cache.delete(key);
    this.cache.set(key, current);
    if (this.cache.size > this.cacheSize) {
      const oldest = this.cache.keys().next();
      if (!oldest.done) this.cache.delete(oldest.value);
    }
  }

  /** Another process that committed to this file makes the remembered sessions stale. */
  private checkOtherWriters(): void {
    const version = this.dataVersionQuery.get() as number;
    if (version !== this.dataVersion) {
      this.forgetAll();
      this.dataVersion = version;
    }
  }

  private read<T>(run: () => T): T {
    if (this.closed) throw new SessiondError("STORE_CLOSED", "the store is closed");
    try {
      return run();
    } catch (error) {
      throw asStoreError(error);
    }
  }
}

function openDatabase(
  path: string,
  durability: Durability,
  { busyTimeoutMs, pageCacheKb }: { busyTimeoutMs: number; pageCacheKb: number },
): Database.Database {
  try {
    if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
    const db = new Database(path);
    db.pragma("journal_mode = WAL");
    // Savepoints (one per write in a batch) spill to temporary files otherwise.
    db.pragma("temp_store = MEMORY");
    db.pragma(`synchronous = ${durability === "strict" ? "FULL" : "NORMAL"}`);
    db.pragma(`busy_timeout = ${Math.max(0, Math.floor(busyTimeoutMs))}`);
    // Negative: a size in KiB rather than in pages.
    db.pragma(`cache_size = ${-Math.max(64, Math.floor(pageCacheKb))}`);
    migrate(db);
    return db;
  } catch (error) {
    throw asStoreError(error, path);
  }
}

function walSyncFailed(path: string, error: unknown): SessiondError {
  return new SessiondError("STORE_FAILED", `the fsync of ${path}-wal failed: ${messageOf(error)}`, {
    cause: error,
  });
}

function sqliteCode(error: unknown): string {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === "string" ? code : "";
}

function isIoError(error: unknown): boolean {
  return sqliteCode(error).startsWith("SQLITE_IOERR");
}

function isFsyncError(error: unknown): boolean {
  return sqliteCode(error) === "SQLITE_IOERR_FSYNC" || sqliteCode(error) === "SQLITE_IOERR_DIR_FSYNC";
}

function isConstraintError(error: unknown): boolean {
  return sqliteCode(error).startsWith("SQLITE_CONSTRAINT");
}

function asStoreError(error: unknown, path?: string): SessiondError {
  if (error instanceof SessiondError) return error;
  const code = (error as { code?: unknown }).code;
  const where = path ? ` (${path})` : "";
  if (code === "SQLITE_CORRUPT" || code === "SQLITE_NOTADB") {
    return new SessiondError("STORE_CORRUPT", `the database file is damaged or not a database${where}`, {
      cause: error,
    });
  }
  return new SessiondError("STORE_UNAVAILABLE", `the database failed${where}: ${messageOf(error)}`, {
    cause: error,
  });
}
