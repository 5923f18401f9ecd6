import { LRUCache } from "lru-cache";
import type { Entry } from "../../model/entry.js";
import { freezeInPlace, frozenCopy } from "../frozen.js";

/**
 * A session's entries as read from its file (or written as), and their idempotency keys. The entries are
 * frozen, so the driver hands them out, and the core's context cache keeps them, without copying.
 */
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

  /** Caches the entries just parsed from `bytes` of the session's lines (frozen where they are: nothing else holds them). */
  put(id: string, entries: Entry[], bytes: number): Loaded {
    const loaded: Loaded = { entries, byIdempotencyKey: new Map(), bytes };
    for (const e of entries) {
      freezeInPlace(e);
      if (e.idempotencyKey !== undefined) loaded.byIdempotencyKey.set(e.idempotencyKey, e);
    }
    this.loaded.set(id, loaded);
    return loaded;
  }

  /** `entry` was appended to the session (its lines' bytes are counted by the caller); a frozen copy is kept, the caller owns `entry`. */
  appended(loaded: Loaded, fresh: Entry): void {
    const entry = frozenCopy(fresh).value as Entry;
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
