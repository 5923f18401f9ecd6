import { join } from "node:path";
import type { Entry } from "../../model/entry.js";
import { INDEX_SLICE_CHARS } from "../../search/sqlite/search-index.js";
import { isDamagedError } from "../sql/sqlite-statements.js";
import type { Tracked } from "./directory-scan.js";
import type { FileSystem } from "./durable-fs.js";
import type { FileReads } from "./file-reads.js";
import { mirrors, type SearchTables, type SessionRecord } from "./search-tables.js";
import type { SearchWrites } from "./search-writes.js";
import type { SessionFiles } from "./session-files.js";

/** Where the rebuild of the JSONL store's search index stands (sessions indexed from their files). */
export interface JsonlIndexProgress {
  indexing: boolean;
  /** Sessions the rebuild indexed since the store opened, and how many it had to. */
  done: number;
  total: number;
}

/** A step of the rebuild indexes at most this many sessions, or files of about this many bytes. */
const STEP_SESSIONS = 200;
const STEP_BYTES = 1024 * 1024;
/** A search first indexes the stale sessions itself when no more than this many wait. */
const INLINE_STALE = 16;
/** A step or a write that failed is tried again this much later. */
const RETRY_MS = 1000;

/** A stale session's file as a rebuild step read it; without `tracked`, the session is gone. */
type FileRead =
  | { id: string; tracked?: undefined }
  | { id: string; tracked: Tracked; entries: Entry[]; size: number; mtimeMs: number };

/**
 * What of the index to trust, and the rebuild of the rest. A session whose file changed behind the index
 * (another process, an edit by hand, a crash) is indexed again from its file in the background; results
 * say `indexing` meanwhile. At close, the files written this run are measured, so the next open trusts
 * their rows.
 */
export class SearchRebuild {
  /** Stale sessions, in the order the rebuild takes them. */
  private queue: string[] = [];
  private readonly queued = new Set<string>();
  private done = 0;
  private total = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly dir: string,
    private readonly tables: SearchTables,
    private readonly writes: SearchWrites,
    private readonly files: SessionFiles,
    private readonly reads: FileReads,
    private readonly fs: FileSystem,
    private readonly onProgress: ((progress: JsonlIndexProgress) => void) | undefined,
  ) {}

  /** At open, the owner compares the index with the directory; a damaged index is replaced. */
  open(): void {
    if (!this.tables.owner) return;
    try {
      this.reconcile();
    } catch (error) {
      if (!isDamagedError(error)) throw error;
      this.recover();
    }
  }

  progress(): JsonlIndexProgress {
    return { indexing: this.indexing(), done: this.done, total: this.total };
  }

  indexing(): boolean {
    if (this.tables.owner) return this.queue.length > 0;
    try {
      return this.tables.anyStale();
    } catch {
      return true;
    }
  }

  /** Another process changed the session's file (read again): its rows are built again from it. */
  stale(sessionId: string): void {
    if (!this.tables.owner || this.tables.closed || this.queued.has(sessionId)) return;
    this.enqueue(sessionId);
    try {
      this.tables.markStale(sessionId);
    } catch {
      // Still queued here; a restart finds the file changed or the index untrusted.
    }
    this.scheduleStep(0);
  }

  /** The session waits to be indexed from its file (what is appended to it meanwhile is read with it). */
  waits(sessionId: string): boolean {
    return this.queued.has(sessionId);
  }

  /** Before a search: the stale sessions, when few wait, are indexed now rather than in the background. */
  catchUp(): void {
    if (this.queue.length > 0 && this.queue.length <= INLINE_STALE) this.step();
  }

  /** The sessions of a write that failed are indexed from their files instead. */
  writeFailed(sessions: ReadonlySet<string>, error: unknown): void {
    for (const id of sessions) if (this.files.get(id)) this.enqueue(id);
    this.retry(error);
  }

  /** A damaged index is replaced by an empty one, which every session is then indexed into. */
  recover(): void {
    this.tables.reopen();
    this.queue = [];
    this.queued.clear();
    if (this.tables.owner) this.reconcile();
  }

  /** At close: the size and mtime of the files written this run, which the next open compares. */
  measureWritten(): void {
    this.tables.transaction(() => {
      for (const id of this.writes.written) {
        const tracked = this.files.get(id);
        if (!tracked || this.queued.has(id)) continue;
        let stat: { size: number; mtimeMs: number };
        try {
          stat = this.fs.statSync(join(this.dir, tracked.file));
        } catch {
          // Gone or unreadable (another process): the next open compares it again.
          this.tables.markStale(id);
          continue;
        }
        this.tables.measured(id, stat.size, stat.mtimeMs);
      }
    });
  }

  cancel(): void {
    if (this.timer) clearTimeout(this.timer);
  }

  /**
   * Compares the index with the directory at open: a session it does not know, or whose file's size or
   * mtime is not what it recorded, loses its rows and waits for the rebuild; a session gone from the
   * directory is forgotten.
   */
  private reconcile(): void {
    const records = new Map<string, SessionRecord>();
    for (const r of this.tables.records()) records.set(r.id, r);
    const stale: Array<{ id: string; at: number }> = [];
    this.tables.transaction(() => {
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
          if (record && record.stale === 0) this.tables.index.remove(record.sid);
          stale.push({ id: session.id, at: session.createdAt });
          if (record) this.tables.markStale(session.id);
        }
        if (!record) this.tables.upsert(session, -1, null, 1);
        else if (!mirrors(record, session))
          this.tables.upsert(session, record.size, record.mtime, record.stale);
      }
      for (const record of records.values()) this.tables.forget(record.id, record.sid);
    });
    // Oldest first, so that the index's rows (the order its windows take matches in) follow the messages'
    // time, as they do when appended.
    stale.sort((a, b) => a.at - b.at);
    for (const { id } of stale) this.enqueue(id);
    this.scheduleStep(0);
  }

  /** Indexes the next stale sessions from their files, in one transaction, their messages in time order. */
  private step(): void {
    const batch: string[] = [];
    let bytes = 0;
    while (this.queue.length > 0 && batch.length < STEP_SESSIONS && bytes < STEP_BYTES) {
      const id = this.queue.shift()!;
      batch.push(id);
      bytes += this.files.get(id)?.size ?? 0;
    }
    if (batch.length === 0) return;
    // Their files hold what of them waits to be written (forIndex writes the journal's bytes first).
    this.writes.forget(batch);
    let more = false;
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
      this.tables.transaction(() => {
        const messages: Array<{ sid: number; entry: Entry }> = [];
        for (const r of read) {
          if (!r.tracked) {
            this.tables.forget(r.id);
            continue;
          }
          const sid = this.tables.upsert(r.tracked.session, r.size, r.mtimeMs, 1);
          this.tables.index.remove(sid);
          for (const entry of r.entries) messages.push({ sid, entry });
          this.tables.markWhole(sid);
        }
        messages.sort((a, b) => a.entry.ts - b.entry.ts);
        for (const { sid, entry } of messages) this.tables.index.add(sid, [entry]);
        // A slice of the FTS indexes now; the rest in steps of their own (a search matches those rows itself).
        more = this.tables.index.indexPending(INDEX_SLICE_CHARS);
      });
    } catch (error) {
      this.tables.rolledBack();
      this.queue.unshift(...batch);
      this.retry(error);
      return;
    }
    if (more) this.writes.indexRest();
    for (const id of batch) this.queued.delete(id);
    this.done += batch.length;
    this.onProgress?.(this.progress());
  }

  /** A damaged index is replaced at once; a write that failed otherwise is tried again later. */
  private retry(error: unknown): void {
    if (isDamagedError(error)) this.recover();
    else this.scheduleStep(RETRY_MS);
  }

  private scheduleStep(ms: number): void {
    if (this.tables.closed || this.timer || this.queue.length === 0) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.tables.closed) return;
      this.step();
      this.scheduleStep(0);
    }, ms);
    this.timer.unref();
  }

  private enqueue(id: string): void {
    if (this.queued.has(id)) return;
    this.queued.add(id);
    this.queue.push(id);
    this.total++;
  }
}
