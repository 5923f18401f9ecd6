import type { Entry } from "../../model/entry.js";
import { indexedText } from "../../search/indexed-text.js";
import type { WriteGroup } from "../driver.js";
import { mirrors, type SearchTables } from "./search-tables.js";
import type { SessionFiles } from "./session-files.js";

/** What waits to be written to the index goes there once it holds this many messages or characters… */
const FLUSH_ENTRIES = 1000;
const FLUSH_CHARS = 1024 * 1024;
/** …or this long after it started waiting, or before a search, a step of the rebuild, or the close. */
const FLUSH_DELAY_MS = 250;

/**
 * What committed batches change in the index: their messages wait in memory and are written in bulk, with
 * the rows of the sessions they touched and deleted. A search writes what waits first, so it finds every
 * acknowledged message.
 */
export class SearchWrites {
  private waiting = new Map<string, Entry[]>();
  private touched = new Set<string>();
  private deleted = new Set<string>();
  private waitingEntries = 0;
  private waitingChars = 0;
  /** Sessions written this run: their files' size and mtime are recorded at close. */
  private readonly sessionsWritten = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  /** The next slice of the rows not in the FTS indexes yet, once the event loop has run. */
  private sliceTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly tables: SearchTables,
    private readonly files: SessionFiles,
    /** A write that failed (rolled back): its sessions go to the rebuild. */
    private readonly failed: (sessions: ReadonlySet<string>, error: unknown) => void,
  ) {}

  get written(): ReadonlySet<string> {
    return this.sessionsWritten;
  }

  /** The changes of a batch whose frame is in the journal (groups that committed). */
  committed(groups: readonly WriteGroup[]): void {
    if (!this.tables.owner || this.tables.closed) return;
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
    else if ((this.touched.size > 0 || this.deleted.size > 0) && !this.timer) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.flush();
      }, FLUSH_DELAY_MS);
      this.timer.unref();
    }
  }

  /** Writes what waits; a write that fails sends its sessions to the rebuild instead. */
  flush(): void {
    this.cancel();
    if (!this.tables.owner || (this.touched.size === 0 && this.deleted.size === 0)) return;
    const { waiting, touched, deleted } = this;
    this.waiting = new Map();
    this.touched = new Set();
    this.deleted = new Set();
    this.waitingEntries = 0;
    this.waitingChars = 0;
    try {
      this.tables.transaction(() => {
        for (const id of deleted) this.tables.forget(id);
        for (const id of touched) {
          const tracked = this.files.get(id);
          if (!tracked) {
            this.tables.forget(id);
            continue;
          }
          const known = this.tables.known(id);
          // The size is measured at close: a flush only needs the row to exist and mirror the session.
          const sid =
            known && mirrors(known, tracked.session)
              ? known.sid
              : this.tables.upsert(tracked.session, tracked.size, null, 0);
          const entries = waiting.get(id);
          if (entries) this.tables.index.add(sid, entries);
          this.sessionsWritten.add(id);
        }
        // A flush is already a batch: its rows go into the FTS indexes in the same transaction, a slice
        // of them (a search matches the others itself); the rest in steps of their own.
        if (this.tables.index.indexStep()) this.indexRest();
      });
    } catch (error) {
      this.tables.rolledBack();
      this.failed(touched, error);
    }
  }

  /** Stops waiting to write (what waits is written by the next flush). */
  cancel(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.sliceTimer) clearTimeout(this.sliceTimer);
    this.sliceTimer = undefined;
  }

  /** Takes the rows left out of the FTS indexes in, a slice a turn of the event loop. */
  private indexRest(): void {
    if (this.sliceTimer) return;
    this.sliceTimer = setTimeout(() => {
      this.sliceTimer = undefined;
      if (!this.tables.owner || this.tables.closed) return;
      let more = false;
      try {
        this.tables.transaction(() => {
          more = this.tables.index.indexStep();
        });
      } catch {
        // Left out: a search matches those rows itself, and the next flush takes a slice again.
        return;
      }
      if (more) this.indexRest();
    }, 0);
    this.sliceTimer.unref();
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
}
