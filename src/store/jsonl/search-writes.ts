import type { Entry } from "../../model/entry.js";
import { indexedText } from "../../search/indexed-text.js";
import { INDEX_SLICE_CHARS } from "../../search/sqlite/search-index.js";
import type { WriteGroup } from "../driver.js";
import { mirrors, type SearchTables } from "./search-tables.js";
import type { SessionFiles } from "./session-files.js";

/**
 * The most memory (bytes, as `entryBytes` counts them) of committed messages waiting to be indexed. Past
 * it, a session's messages are not kept: the session is handed to the rebuild, which indexes it from its
 * file (search-rebuild.ts).
 */
export const QUEUE_BYTES = 16 * 1024 * 1024;
/** While appends wait to be committed, indexing waits too, until this much is queued. */
const BUSY_BYTES = QUEUE_BYTES / 2;
/** A step of the indexing writes about this much text, or this many messages, in one transaction… */
const STEP_CHARS = INDEX_SLICE_CHARS;
const STEP_ENTRIES = 256;
/** …and starts once that much waits, or this long after the first change started waiting… */
const STEP_DELAY_MS = 250;
/** …and, while appends wait to be committed, looks again this much later. */
const BUSY_RETRY_MS = 1;

/** What a queued message holds in memory, about: its text (UTF-16) and the entry around it. */
function entryBytes(content: string): number {
  return 2 * content.length + 256;
}

/**
 * What committed batches change in the index. A commit only queues it (the batch is acknowledged without
 * the index written); it is written after, in steps of bounded work (a slice of text and one slice of the
 * FTS indexes each, one transaction a turn of the event loop), with the rows of the sessions touched and
 * deleted, once nothing waits to be committed: a burst of appends runs at the files' speed and is indexed
 * after it. The queue is bounded by `QUEUE_BYTES`: from half of it, steps run between batches whatever
 * waits, and past it sessions go to the rebuild, which reads their files. A search first catches up within
 * its time budget (`catchUp`). A crash loses only what waits here, and the index it leaves is not vouched
 * for (no close record), so the next open rebuilds it from the files (search-db.ts).
 */
export class SearchWrites {
  private waiting = new Map<string, Entry[]>();
  /** Sessions whose row must be written, in the order they were touched. */
  private touched = new Set<string>();
  private deleted = new Set<string>();
  /** Sessions whose messages did not fit in the queue: the next step hands them to the rebuild. */
  private overflowed = new Set<string>();
  private waitingEntries = 0;
  private waitingBytes = 0;
  /** Sessions written this run: their files' size and mtime are recorded at close. */
  private readonly sessionsWritten = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private immediate: NodeJS.Immediate | undefined;

  constructor(
    private readonly tables: SearchTables,
    private readonly files: SessionFiles,
    /** Whether nothing waits to be committed: indexing waits for that (up to `BUSY_BYTES` queued). */
    private readonly idle: () => boolean,
    private readonly rebuild: {
      /** A write that failed (rolled back): its sessions are indexed from their files instead. */
      writeFailed(sessions: ReadonlySet<string>, error: unknown): void;
      /** Sessions to index from their files (their messages did not fit in the queue). */
      stale(sessionId: string): void;
      /** The session waits to be indexed from its file: what it is appended meanwhile is read with it. */
      waits(sessionId: string): boolean;
    },
  ) {}

  get written(): ReadonlySet<string> {
    return this.sessionsWritten;
  }

  /** Whether committed changes wait to be written (a search that finds them may miss some). */
  get behind(): boolean {
    return this.touched.size > 0 || this.deleted.size > 0 || this.overflowed.size > 0;
  }

  /** The changes of a batch whose frame is in the journal (groups that committed): queued, not written. */
  committed(groups: readonly WriteGroup[]): void {
    if (!this.tables.owner || this.tables.closed) return;
    for (const group of groups)
      for (const change of group.changes) {
        switch (change.kind) {
          case "createSession":
          case "updateSession":
            this.touch(change.session.id);
            break;
          case "appendEntries":
            if (this.touch(change.session.id)) this.wait(change.session.id, change.entries);
            break;
          case "moveSessions":
            for (const session of change.sessions) this.touch(session.id);
            break;
          case "deleteSession":
            this.drop(change.session.id);
            this.overflowed.delete(change.session.id);
            this.deleted.add(change.session.id);
            break;
          case "rewriteEntries":
            // Erasure: the session's rows go, and the rebuild indexes its rewritten file again.
            this.drop(change.session.id);
            this.deleted.add(change.session.id);
            this.overflowed.add(change.session.id);
            break;
        }
      }
    if (
      this.waitingEntries >= STEP_ENTRIES ||
      this.waitingBytes >= 2 * STEP_CHARS ||
      this.overflowed.size > 0
    )
      this.scheduleNow();
    else if (this.behind && !this.timer && !this.immediate) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.scheduleNow();
      }, STEP_DELAY_MS);
      this.timer.unref();
    }
  }

  /** Writes everything that waits (at close). */
  flush(): void {
    this.cancel();
    while (this.step());
  }

  /**
   * Writes what waits, a step at a time with the event loop let run between, until none is left or
   * `deadline` (performance.now()) passes; true when none is left. Rows not in the FTS indexes yet are
   * left to the scheduled steps: a search matches them itself.
   */
  async catchUp(deadline: number): Promise<boolean> {
    for (;;) {
      if (!this.behind) return true;
      this.step();
      if (!this.behind) return true;
      if (performance.now() >= deadline || this.tables.closed) return false;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  /** The rebuild reads these sessions' files, which hold what waits of them here: it is not written. */
  forget(sessionIds: Iterable<string>): void {
    for (const id of sessionIds) {
      this.drop(id);
      this.overflowed.delete(id);
    }
  }

  /** Rows wait to go into the FTS indexes (the rebuild wrote them): steps take them in, a slice each. */
  indexRest(): void {
    if (this.tables.owner && !this.tables.closed) this.scheduleNow();
  }

  /** Stops scheduling steps (what waits is written by the next step, search or flush). */
  cancel(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.immediate) clearImmediate(this.immediate);
    this.immediate = undefined;
  }

  /**
   * One step: the deleted sessions forgotten, the rows of touched sessions and their messages written
   * until about `STEP_CHARS` of text or `STEP_ENTRIES` messages (one message at least), and one slice of
   * the FTS indexes; whether work is left. A write that fails sends its sessions to the rebuild instead.
   */
  private step(): boolean {
    if (!this.tables.owner || this.tables.closed) return false;
    for (const id of this.overflowed) this.rebuild.stale(id);
    this.overflowed.clear();
    if (!this.behind && this.tables.index.pending === 0) return false;
    const deleted = this.deleted;
    this.deleted = new Set();
    const taken = new Set<string>();
    const entriesOf = new Map<string, Entry[]>();
    let chars = 0;
    let entries = 0;
    // The first messages of a session whose queue is longer than what is left of the step: the rest wait.
    let partly: { id: string; count: number } | undefined;
    for (const id of this.touched) {
      if (taken.size > 0 && (chars >= STEP_CHARS || entries >= STEP_ENTRIES)) break;
      taken.add(id);
      const list = this.waiting.get(id);
      if (!list) continue;
      let count = 0;
      while (count < list.length && (count === 0 || (chars < STEP_CHARS && entries < STEP_ENTRIES))) {
        chars += indexedText(list[count]!)?.text.length ?? 0;
        entries++;
        count++;
      }
      entriesOf.set(id, count === list.length ? list : list.slice(0, count));
      if (count < list.length) {
        partly = { id, count };
        break;
      }
    }
    for (const id of taken) if (id !== partly?.id) this.drop(id);
    if (partly) this.dropFirst(partly.id, partly.count);
    let more = false;
    try {
      this.tables.transaction(() => {
        for (const id of deleted) this.tables.forget(id);
        for (const id of taken) this.writeSession(id, entriesOf.get(id));
        more = this.tables.index.indexPending(INDEX_SLICE_CHARS);
      });
    } catch (error) {
      this.tables.rolledBack();
      this.rebuild.writeFailed(taken, error);
      return this.behind;
    }
    return more || this.behind;
  }

  private writeSession(id: string, entries: Entry[] | undefined): void {
    const tracked = this.files.get(id);
    if (!tracked) {
      this.tables.forget(id);
      return;
    }
    const known = this.tables.known(id);
    // The size is measured at close: a step only needs the row to exist and mirror the session.
    const sid =
      known && mirrors(known, tracked.session)
        ? known.sid
        : this.tables.upsert(tracked.session, tracked.size, null, 0);
    if (entries) this.tables.index.add(sid, entries);
    this.sessionsWritten.add(id);
  }

  /** Steps, one a turn of the event loop, once nothing waits to be committed or the queue is half full. */
  private scheduleNow(): void {
    if (this.immediate) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.immediate = setImmediate(() => {
      this.immediate = undefined;
      if (!this.idle() && this.waitingBytes < BUSY_BYTES && this.overflowed.size === 0) {
        this.timer = setTimeout(() => {
          this.timer = undefined;
          this.scheduleNow();
        }, BUSY_RETRY_MS);
        this.timer.unref();
      } else if (this.step()) this.scheduleNow();
    });
    this.immediate.unref();
  }

  /** Whether the session's changes are queued here (not when its file is to be read by the rebuild). */
  private touch(id: string): boolean {
    if (this.overflowed.has(id) || this.rebuild.waits(id)) return false;
    this.touched.add(id);
    return true;
  }

  private drop(id: string): void {
    this.touched.delete(id);
    const list = this.waiting.get(id);
    if (!list) return;
    this.waiting.delete(id);
    for (const entry of list) {
      this.waitingEntries--;
      this.waitingBytes -= entry.type === "message" ? entryBytes(entry.content) : 0;
    }
  }

  /** The session's first `count` queued messages, taken by a step; the session stays queued for the rest. */
  private dropFirst(id: string, count: number): void {
    for (const entry of this.waiting.get(id)?.splice(0, count) ?? []) {
      this.waitingEntries--;
      this.waitingBytes -= entry.type === "message" ? entryBytes(entry.content) : 0;
    }
  }

  private wait(sessionId: string, entries: readonly Entry[]): void {
    let list: Entry[] | undefined;
    let bytes = 0;
    for (const entry of entries) {
      if (entry.type !== "message") continue;
      list ??= this.waiting.get(sessionId) ?? [];
      list.push(entry);
      bytes += entryBytes(entry.content);
      this.waitingEntries++;
    }
    if (!list) return;
    this.waiting.set(sessionId, list);
    this.waitingBytes += bytes;
    if (this.waitingBytes > QUEUE_BYTES) {
      this.drop(sessionId);
      this.overflowed.add(sessionId);
    }
  }
}
