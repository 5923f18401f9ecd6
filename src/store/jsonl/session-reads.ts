import type { Entry } from "../../model/entry.js";
import type { Session } from "../../model/session.js";
import type { KeptContext, KeyHead } from "../driver.js";
import { keptOf } from "../entry-range.js";
import { cloneSession } from "../session-log.js";
import { forksAmong, type NormalisedQuery, pageOf, sweepOf } from "../session-query.js";
import type { EntryRange, SessionScan } from "../store.js";
import { guarded } from "./directory-error.js";
import type { FileReads } from "./file-reads.js";
import type { SessionFiles } from "./session-files.js";

/**
 * What the JSONL driver answers the log core's reads with: sessions from what memory holds of the
 * directory, entries from the entry cache or the session's file (file-reads.ts). A key's file another
 * process appended to is read again before its head is given.
 */
export class SessionReads {
  constructor(
    private readonly path: string,
    private readonly files: SessionFiles,
    private readonly reads: FileReads,
  ) {}

  loadKey(key: string): KeyHead {
    let tracked = this.files.current(key);
    if (tracked && this.reads.refresh(tracked)) tracked = this.files.current(key);
    const lastGeneration = this.files.lastGeneration(key);
    return tracked ? { current: cloneSession(tracked.session), lastGeneration } : { lastGeneration };
  }

  generations(key: string): Session[] {
    return this.files
      .ofKey(key)
      .map((t) => cloneSession(t.session))
      .sort((a, b) => b.generation - a.generation);
  }

  sessionById(id: string): Session | undefined {
    const tracked = this.files.get(id);
    return tracked && cloneSession(tracked.session);
  }

  findIdempotent(session: Session, keys: readonly string[]): Map<string, Entry> {
    const found = new Map<string, Entry>();
    const tracked = this.files.get(session.id);
    if (!tracked) return found;
    const loaded = guarded(this.path, () => this.reads.load(tracked));
    for (const key of keys) {
      const entry = loaded.byIdempotencyKey.get(key);
      if (entry) found.set(key, entry);
    }
    return found;
  }

  readEntries(session: Session, range: EntryRange & { order: "asc" | "desc" }): Entry[] {
    const tracked = this.files.get(session.id);
    if (!tracked) return [];
    const { entries } = guarded(this.path, () => this.reads.load(tracked));
    const inRange = entries.filter(
      (e) => e.seq > (range.afterSeq ?? 0) && (range.beforeSeq === undefined || e.seq < range.beforeSeq),
    );
    if (range.order === "desc") inRange.reverse();
    return range.limit === undefined ? inRange : inRange.slice(0, range.limit);
  }

  loadKept(session: Session): KeptContext {
    const tracked = this.files.get(session.id);
    if (!tracked) return { entries: [] };
    // The entry cache holds frozen entries only (entry-cache.ts).
    const { entries } = guarded(this.path, () => this.reads.load(tracked));
    return { ...keptOf(session, entries), frozen: true };
  }

  forksOf(sessionIds: readonly string[]): Session[] {
    return forksAmong(this.sessions(), sessionIds);
  }

  list(query: NormalisedQuery): Session[] {
    return pageOf(query, this.sessions());
  }

  scan(scan: SessionScan & { limit: number }): Session[] {
    return sweepOf(scan, this.sessions());
  }

  private *sessions(): Generator<Session> {
    for (const t of this.files.all()) yield t.session;
  }
}
