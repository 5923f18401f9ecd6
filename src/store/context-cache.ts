import type { CompactionEntry, Entry } from "../model/entry.js";
import type { Session } from "../model/session.js";

interface Cached {
  /** The store's own id of the generation the entries belong to. */
  sid: number;
  /** The seq of the last entry seen: the cache is only good while it equals the session's `entryCount`. */
  lastSeq: number;
  fromSeq: number;
  entries: Entry[];
  summary?: CompactionEntry;
}

export interface CachedContext {
  entries: Entry[];
  summary?: CompactionEntry;
}

/**
 * The kept context of recently active sessions, so a turn's context load costs what was appended since
 * the last one instead of every kept entry. Appends extend it; anything it cannot vouch for (another
 * generation, a gap in seq, a rolled-back batch, another process's write) drops it. Bounded by entries held.
 */
export class ContextCache {
  private readonly byKey = new Map<string, Cached>();
  private held = 0;

  constructor(private readonly maxEntries: number) {}

  /** The kept entries (a fresh array) and summary, when the cache holds exactly `session`'s context. */
  get(key: string, sid: number, session: Session): CachedContext | undefined {
    const cached = this.byKey.get(key);
    if (!cached) return undefined;
    if (
      cached.sid !== sid ||
      cached.lastSeq !== session.entryCount ||
      cached.fromSeq !== session.contextFromSeq
    ) {
      this.drop(key);
      return undefined;
    }
    this.byKey.delete(key);
    this.byKey.set(key, cached);
    return { entries: cached.entries.slice(), ...(cached.summary ? { summary: cached.summary } : {}) };
  }

  /** Remembers a context just loaded from the store. */
  put(key: string, sid: number, session: Session, context: CachedContext): void {
    this.drop(key);
    if (context.entries.length > this.maxEntries / 4) return;
    this.byKey.set(key, {
      sid,
      lastSeq: session.entryCount,
      fromSeq: session.contextFromSeq,
      entries: context.entries.slice(),
      ...(context.summary ? { summary: context.summary } : {}),
    });
    this.held += context.entries.length;
    this.evict();
  }

  /** Entries `fresh` were appended to the generation `sid`, leaving it as `session`. */
  appended(key: string, sid: number, session: Session, fresh: readonly Entry[]): void {
    const cached = this.byKey.get(key);
    const first = fresh[0];
    if (!cached || !first) return;
    if (cached.sid !== sid || cached.lastSeq !== first.seq - 1 || session.contextFromSeq < cached.fromSeq) {
      this.drop(key);
      return;
    }
    for (const entry of fresh) {
      if (entry.type === "compaction") {
        if (entry.seq === session.lastCompactionSeq) cached.summary = entry;
      } else {
        cached.entries.push(entry);
        this.held++;
      }
    }
    cached.lastSeq = session.entryCount;
    if (session.contextFromSeq !== cached.fromSeq) {
      const before = cached.entries.length;
      cached.entries = cached.entries.filter((e) => e.seq >= session.contextFromSeq);
      this.held -= before - cached.entries.length;
      cached.fromSeq = session.contextFromSeq;
    }
    this.evict();
  }

  drop(key: string): void {
    const cached = this.byKey.get(key);
    if (!cached) return;
    this.held -= cached.entries.length;
    this.byKey.delete(key);
  }

  clear(): void {
    this.byKey.clear();
    this.held = 0;
  }

  private evict(): void {
    while (this.held > this.maxEntries) {
      const oldest = this.byKey.keys().next();
      if (oldest.done) return;
      this.drop(oldest.value);
    }
  }
}
