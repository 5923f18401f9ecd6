import { join } from "node:path";
import { LRUCache } from "lru-cache";
import type { Entry } from "../../model/entry.js";
import type { Session } from "../../model/session.js";
import { indexedText } from "../../search/indexed-text.js";
import type { NormalisedSearch, SearchResult } from "../../search/query.js";
import type { WriteGroup } from "../driver.js";
import { SqliteSearchIndex } from "../sqlite/search-index.js";
import { Statements } from "../sqlite/sqlite-sql.js";
import type { Tracked } from "./directory-scan.js";
import type { FileSystem } from "./durable-fs.js";
import type { FileReads } from "./file-reads.js";
import { closeSearchDb, openSearchDb, type SearchDb } from "./search-db.js";
import type { SessionFiles } from "./session-files.js";

/** Where the rebuild of the JSONL store's search index stands (sessions indexed from their files). */
export interface JsonlIndexProgress {
  indexing: boolean;
  /** Sessions the rebuild indexed since the store opened, and how many it had to. */
  done: number;
  total: number;
}

/** What waits to be written to the index goes there once it holds this many messages or characters… */
const FLUSH_ENTRIES = 1000;
const FLUSH_CHARS = 1024 * 1024;
/** …or this long after it started waiting, or before a search, a step of the rebuild, or the close. */
const FLUSH_DELAY_MS = 250;
/** Sessions whose row this store knows as written (sid and mirrored fields), so a flush skips rewriting it. */
const KNOWN_SESSIONS = 10_000;
/** A step of the rebuild indexes at most this many sessions, or files of about this many bytes. */
const STEP_SESSIONS = 200;
const STEP_BYTES = 8 * 1024 * 1024;
/** A search first indexes the stale sessions itself when no more than this many wait. */
const INLINE_STALE = 16;
/** A step or a write that failed is tried again this much later. */
const RETRY_MS = 1000;

const SQL = {
  records: "SELECT sid, id, key, generation, state, agent, channel, size, mtime, stale FROM sessions",
  upsert: `INSERT INTO sessions (id, key, generation, state, agent, channel, size, mtime, stale)
    VALUES (@id, @key, @generation, @state, @agent, @channel, @size, @mtime, @stale)
    ON CONFLICT (id) DO UPDATE SET key = excluded.key, generation = excluded.generation, state = excluded.state,
      agent = excluded.agent, channel = excluded.channel, size = excluded.size, mtime = excluded.mtime
    RETURNING sid`,
  whole: "UPDATE sessions SET stale = 0 WHERE sid = ?",
  measured: "UPDATE sessions SET size = ?, mtime = ? WHERE id = ?",
  stale: "UPDATE sessions SET stale = 1 WHERE id = ?",
  sidOf: "SELECT sid FROM sessions WHERE id = ?",
  forget: "DELETE FROM sessions WHERE sid = ?",
  anyStale: "SELECT 1 FROM sessions WHERE stale = 1 LIMIT 1",
} as const;

interface SessionRecord {
  sid: number;
  id: string;
  key: string;
  generation: number;
  state: string;
  agent: string;
  channel: string;
  size: number;
  mtime: number | null;
  stale: number;
}

/**
 * The JSONL store's search index: a SQLite file beside the session files (`.sessiond/search.db`), on
 * which the SQLite store's index (search-index.ts) runs unchanged, so both rank and filter alike. The
 * messages of each committed batch wait in memory and are written in bulk; a search writes what waits
 * first, so it finds every acknowledged message. A session whose file changed behind the index (another
 * process, an edit by hand, a crash) is indexed again from its file in the background; results say
 * `indexing` meanwhile.
 */
export class JsonlSearchIndex {
  private sidecar: SearchDb;
  private index: SqliteSearchIndex;
  private sql: Statements;
  private waiting = new Map<string, Entry[]>();
  private touched = new Set<string>();
  private deleted = new Set<string>();
  private waitingEntries = 0;
  private waitingChars = 0;
  /** Sessions written this run: their files' size and mtime are recorded at close. */
  private readonly written = new Set<string>();
  /** Stale sessions, in the order the rebuild takes them. */
  private queue: string[] = [];
  private readonly queued = new Set<string>();
  /** Rows as last written: a flush rewrites a session's row only when what it mirrors changed. */
  private readonly rows = new LRUCache<string, SessionRecord>({ max: KNOWN_SESSIONS });
  private done = 0;
  private total = 0;
  private flushTimer: NodeJS.Timeout | undefined;
  private stepTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly dir: string,
    private readonly metaDir: string,
    private readonly files: SessionFiles,
    private readonly reads: FileReads,
    private readonly fs: FileSystem,
    private readonly onProgress: ((progress: JsonlIndexProgress) => void) | undefined,
  ) {
    this.sidecar = openSearchDb(metaDir, fs);
    this.sql = new Statements(this.sidecar.db);
    this.index = new SqliteSearchIndex(this.sidecar.db, this.sql);
    if (!this.sidecar.owner) return;
    try {
      this.reconcile();
    } catch (error) {
      if (!isDamaged(error)) throw error;
      this.recover();
    }
  }

  get owner(): boolean {
    return this.sidecar.owner;
  }

  progress(): JsonlIndexProgress {
    return { indexing: this.indexing(), done: this.done, total: this.total };
  }

  /** The changes of a batch whose frame is in the journal (groups that committed). */
  committed(groups: readonly WriteGroup[]): void {
    if (!this.sidecar.owner || this.closed) return;
    for (const group of groups)
      for (const change of group.changes) {
        switch (change.kind) {
          case "createSession":
          case "updateSession":
            this.touched.add(change.session.id);
            break;
          case "appendEntries":
            this.touched.add(change.session.id);
            this.wait(change.session.id, change.entries);
            break;
          case "moveSessions":
            for (const session of change.sessions) this.touched.add(session.id);
            break;
          case "deleteSession":
            this.deleted.add(change.session.id);
            this.touched.delete(change.session.id);
            this.waiting.delete(change.session.id);
            break;
        }
      }
    if (this.waitingEntries >= FLUSH_ENTRIES || this.waitingChars >= FLUSH_CHARS) this.flush();
    else if ((this.touched.size > 0 || this.deleted.size > 0) && !this.flushTimer) {
      this.flushTimer = setTimeout(() => {
        this.flushTimer = undefined;
        this.flush();
      }, FLUSH_DELAY_MS);
      this.flushTimer.unref();
    }
  }

  /** Another process changed the session's file (read again): its rows are built again from it. */
  stale(sessionId: string): void {
    if (!this.sidecar.owner || this.closed || this.queued.has(sessionId)) return;
    this.enqueue(sessionId);
    try {
      this.sql.get(SQL.stale).run(sessionId);
    } catch {
      // Still queued here; a restart finds the file changed or the index untrusted.
    }
    this.scheduleStep(0);
  }

  search(q: NormalisedSearch): SearchResult {
    if (this.sidecar.owner) {
      this.flush();
      if (this.queue.length > 0 && this.queue.length <= INLINE_STALE) this.step();
    }
    let result: SearchResult;
    try {
      result = this.index.search(q);
    } catch (error) {
      if (!isDamaged(error)) throw error;
      this.recover();
      return { hits: [], indexing: true };
    }
    // Another process may have deleted a session the index still holds.
    const hits = result.hits.filter((hit) => this.files.get(hit.sessionId) !== undefined);
    return { ...result, hits, indexing: this.indexing() };
  }

  /** Writes what waits; a write that fails sends its sessions to the rebuild instead. */
  flush(): void {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    if (!this.sidecar.owner || (this.touched.size === 0 && this.deleted.size === 0)) return;
    const { waiting, touched, deleted } = this;
    this.waiting = new Map();
    this.touched = new Set();
    this.deleted = new Set();
    this.waitingEntries = 0;
    this.waitingChars = 0;
    try {
      this.sidecar.db
        .transaction(() => {
          for (const id of deleted) this.forget(id);
          for (const id of touched) {
            const tracked = this.files.get(id);
            if (!tracked) {
              this.forget(id);
              continue;
            }
            const known = this.rows.get(id);
            // The size is measured at close: a flush only needs the row to exist and mirror the session.
            const sid =
              known && mirrors(known, tracked.session)
                ? known.sid
                : this.upsert(tracked.session, tracked.size, null, 0);
            const entries = waiting.get(id);
            if (entries) this.index.add(sid, entries);
            this.written.add(id);
          }
          // A flush is already a batch: its rows go into the FTS indexes in the same transaction.
          this.index.indexPending();
        })
        .immediate();
    } catch (error) {
      this.index.forgetWords();
      this.rows.clear();
      for (const id of touched) if (this.files.get(id)) this.enqueue(id);
      if (isDamaged(error)) this.recover();
      else this.scheduleStep(RETRY_MS);
    }
  }

  /**
   * Gives up the index: what waits is written and the size and mtime of the files written this run are
   * recorded, then (`clean`) the file is made durable and vouched for by the close record.
   */
  close(clean: boolean): void {
    if (this.closed) return;
    if (this.flushTimer) clearTimeout(this.flushTimer);
    if (this.stepTimer) clearTimeout(this.stepTimer);
    let whole = clean;
    if (clean && this.sidecar.owner) {
      try {
        this.flush();
        this.sidecar.db
          .transaction(() => {
            for (const id of this.written) {
              const tracked = this.files.get(id);
              if (!tracked || this.queued.has(id)) continue;
              let stat: { size: number; mtimeMs: number };
              try {
                stat = this.fs.statSync(join(this.dir, tracked.file));
              } catch {
                // Gone or unreadable (another process): the next open compares it again.
                this.sql.get(SQL.stale).run(id);
                continue;
              }
              this.sql.get(SQL.measured).run(stat.size, stat.mtimeMs, id);
            }
          })
          .immediate();
      } catch {
        whole = false;
      }
    }
    this.closed = true;
    closeSearchDb(this.sidecar, whole, this.fs);
  }

  private indexing(): boolean {
    if (this.sidecar.owner) return this.queue.length > 0;
    try {
      return this.sql.get(SQL.anyStale).get() !== undefined;
    } catch {
      return true;
    }
  }

  private wait(sessionId: string, entries: readonly Entry[]): void {
    let list: Entry[] | undefined;
    for (const entry of entries) {
      const text = indexedText(entry);
      if (!text) continue;
      list ??= this.waiting.get(sessionId) ?? [];
      list.push(entry);
      this.waitingEntries++;
      this.waitingChars += text.text.length;
    }
    if (list) this.waiting.set(sessionId, list);
  }

  /**
   * Compares the index with the directory at open: a session it does not know, or whose file's size or
   * mtime is not what it recorded, loses its rows and waits for the rebuild; a session gone from the
   * directory is forgotten.
   */
  private reconcile(): void {
    const records = new Map<string, SessionRecord>();
    for (const r of this.sql.get(SQL.records).iterate() as Iterable<SessionRecord>) records.set(r.id, r);
    const stale: Array<{ id: string; at: number }> = [];
    this.sidecar.db
      .transaction(() => {
        for (const tracked of this.files.all()) {
          const session = tracked.session;
          const record = records.get(session.id);
          records.delete(session.id);
          const whole =
            record !== undefined &&
            record.stale === 0 &&
            record.size === tracked.size &&
            record.mtime === tracked.mtimeMs;
          if (!whole) {
            if (record && record.stale === 0) this.index.remove(record.sid);
            stale.push({ id: session.id, at: session.createdAt });
            if (record) this.sql.get(SQL.stale).run(session.id);
          }
          if (!record) this.upsert(session, -1, null, 1);
          else if (!mirrors(record, session)) this.upsert(session, record.size, record.mtime, record.stale);
        }
        for (const record of records.values()) {
          this.rows.delete(record.id);
          this.index.remove(record.sid);
          this.sql.get(SQL.forget).run(record.sid);
        }
      })
      .immediate();
    // Oldest first, so that the index's rows (the order its windows take matches in) follow the messages'
    // time, as they do when appended.
    stale.sort((a, b) => a.at - b.at);
    for (const { id } of stale) this.enqueue(id);
    this.scheduleStep(0);
  }

  /** Indexes the next stale sessions from their files, in one transaction, their messages in time order. */
  private step(): void {
    this.flush();
    const batch: string[] = [];
    let bytes = 0;
    while (this.queue.length > 0 && batch.length < STEP_SESSIONS && bytes < STEP_BYTES) {
      const id = this.queue.shift()!;
      batch.push(id);
      bytes += this.files.get(id)?.size ?? 0;
    }
    if (batch.length === 0) return;
    try {
      const read = batch.map((id): FileRead => {
        const tracked = this.files.get(id);
        if (!tracked) return { id };
        try {
          return { id, tracked, ...this.reads.forIndex(tracked) };
        } catch {
          // Gone, or unreadable now: forgotten; a file that comes back is indexed at the next open.
          return { id };
        }
      });
      this.sidecar.db
        .transaction(() => {
          const messages: Array<{ sid: number; entry: Entry }> = [];
          for (const r of read) {
            if (!r.tracked) {
              this.forget(r.id);
              continue;
            }
            const sid = this.upsert(r.tracked.session, r.size, r.mtimeMs, 1);
            this.index.remove(sid);
            for (const entry of r.entries) messages.push({ sid, entry });
            this.sql.get(SQL.whole).run(sid);
          }
          messages.sort((a, b) => a.entry.ts - b.entry.ts);
          for (const { sid, entry } of messages) this.index.add(sid, [entry]);
          this.index.indexPending();
        })
        .immediate();
    } catch (error) {
      this.index.forgetWords();
      this.rows.clear();
      this.queue.unshift(...batch);
      if (isDamaged(error)) this.recover();
      else this.scheduleStep(RETRY_MS);
      return;
    }
    for (const id of batch) this.queued.delete(id);
    this.done += batch.length;
    this.onProgress?.(this.progress());
  }

  private scheduleStep(ms: number): void {
    if (this.closed || this.stepTimer || this.queue.length === 0) return;
    this.stepTimer = setTimeout(() => {
      this.stepTimer = undefined;
      if (this.closed) return;
      this.step();
      this.scheduleStep(0);
    }, ms);
    this.stepTimer.unref();
  }

  private enqueue(id: string): void {
    if (this.queued.has(id)) return;
    this.queued.add(id);
    this.queue.push(id);
    this.total++;
  }

  /** A damaged index is replaced by an empty one, which every session is then indexed into. */
  private recover(): void {
    try {
      closeSearchDb(this.sidecar, false, this.fs);
    } catch {
      // Replaced below whatever state it is in.
    }
    this.sidecar = openSearchDb(this.metaDir, this.fs);
    this.sql = new Statements(this.sidecar.db);
    this.index = new SqliteSearchIndex(this.sidecar.db, this.sql);
    this.rows.clear();
    this.queue = [];
    this.queued.clear();
    if (this.sidecar.owner) this.reconcile();
  }

  private upsert(session: Session, size: number, mtime: number | null, stale: number): number {
    const sid = this.sql.get(SQL.upsert).pluck().get({
      id: session.id,
      key: session.key,
      generation: session.generation,
      state: session.state,
      agent: session.agent,
      channel: session.channel,
      size,
      mtime,
      stale,
    }) as number;
    const { id, key, generation, state, agent, channel } = session;
    this.rows.set(id, { sid, id, key, generation, state, agent, channel, size, mtime, stale });
    return sid;
  }

  private forget(id: string): void {
    const sid = this.sql.get(SQL.sidOf).pluck().get(id) as number | undefined;
    this.rows.delete(id);
    if (sid === undefined) return;
    this.index.remove(sid);
    this.sql.get(SQL.forget).run(sid);
  }
}

/** A stale session's file as a rebuild step read it; without `tracked`, the session is gone. */
type FileRead =
  | { id: string; tracked?: undefined }
  | { id: string; tracked: Tracked; entries: Entry[]; size: number; mtimeMs: number };

function mirrors(record: SessionRecord, session: Session): boolean {
  return (
    record.key === session.key &&
    record.generation === session.generation &&
    record.state === session.state &&
    record.agent === session.agent &&
    record.channel === session.channel
  );
}

/** SQLite's answer for a file that is not (or no longer) a sound database. */
function isDamaged(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return code === "SQLITE_CORRUPT" || code === "SQLITE_NOTADB";
}
