import { LRUCache } from "lru-cache";
import type { Entry } from "../../model/entry.js";

/** A session's entries as read from its file (or written as), and their idempotency keys. */
export interface Loaded {
  entries: Entry[];
  byIdempotencyKey: Map<string, Entry>;
  /** The bytes of the lines these entries were read from or written as: the cache's measure. */
  bytes: number;
}

/** Sessions' entries kept in memory after a read or write, bounded by sessions and by bytes. */
export class EntryCache {
  private readonly loaded: LRUCache<string, Loaded>;

  constructor(maxSessions: number, maxBytes: number) {
    this.loaded = new LRUCache({
      max: maxSessions,
      maxSize: maxBytes,
      sizeCalculation: (loaded) => Math.max(1, loaded.bytes),
    });
  }

  /** The session's entries if cached, marked most recently used. */
  get(id: string): Loaded | undefined {
    return this.loaded.get(id);
  }

  /** Caches the entries parsed from `bytes` of the session's lines. */
  put(id: string, entries: Entry[], bytes: number): Loaded {
    const loaded: Loaded = { entries, byIdempotencyKey: new Map(), bytes };
    for (const e of entries)
      if (e.idempotencyKey !== undefined) loaded.byIdempotencyKey.set(e.idempotencyKey, e);
    this.loaded.set(id, loaded);
    return loaded;
  }

  /** `entry` was appended to the session (its lines' bytes are counted by the caller). */
  appended(loaded: Loaded, entry: Entry): void {
    loaded.entries.push(entry);
    if (entry.idempotencyKey !== undefined) loaded.byIdempotencyKey.set(entry.idempotencyKey, entry);
  }

  /** Measured again (and evicted, if over the bound) with what it holds now. */
  remeasure(id: string, loaded: Loaded): void {
    if (this.loaded.has(id)) this.loaded.set(id, loaded);
  }

  drop(id: string): void {
    this.loaded.delete(id);
  }

  stats(): { sessions: number; bytes: number } {
    return { sessions: this.loaded.size, bytes: this.loaded.calculatedSize };
  }
}
