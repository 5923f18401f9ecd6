import { LRUCache } from "lru-cache";
import type { CompactionEntry, Entry } from "../model/entry.js";
import type { Session } from "../model/session.js";
import { type Frozen, frozenCopy, heapBytes } from "./frozen.js";

interface Cached {
  /** The store's own id of the generation the entries belong to (a row id, or the session's id). */
  sid: number | string;
  /** The seq of the last entry seen: the cache is only good while it equals the session's `entryCount`. */
  lastSeq: number;
  fromSeq: number;
  /** Frozen entries, never handed out as this array; `sizes[i]` is what `entries[i]` holds, in bytes. */
  entries: Readonly<Entry>[];
  sizes: number[];
  summary?: Readonly<CompactionEntry>;
  summaryBytes: number;
  bytes: number;
}

export interface CachedContext {
  entries: Readonly<Entry>[];
  summary?: Readonly<CompactionEntry>;
}

/** Default bound of the kept context held in memory, bytes. */
export const DEFAULT_CONTEXT_CACHE_BYTES = 16 * 1024 * 1024;

/**
 * The kept context of recently active sessions, so a turn's context load costs what was appended since
 * the last one instead of every kept entry. Appends extend it; anything it cannot vouch for (another
 * generation, a gap in seq, a rolled-back batch, another process's write) drops it. Bounded by the bytes
 * its entries hold (least recently used sessions go first; a context over a quarter of the bound is not
 * held at all). Entries are frozen copies, or the driver's own entries when it says they are frozen already
 * (`KeptContext.frozen`): what a caller does with what it was given changes nothing here.
 */
export class ContextCache {
  private readonly byKey: LRUCache<string, Cached>;

  constructor(maxBytes: number = DEFAULT_CONTEXT_CACHE_BYTES) {
    this.byKey = new LRUCache<string, Cached>({
      maxSize: Math.max(1, Math.floor(maxBytes)),
      maxEntrySize: Math.max(1, Math.floor(maxBytes / 4)),
      sizeCalculation: (cached) => Math.max(1, cached.bytes),
    });
  }

  /** Bytes held now (as estimated). */
  get bytes(): number {
    return this.byKey.calculatedSize;
  }

  /** The kept entries (a fresh array of frozen entries) and summary, when the cache holds exactly `session`'s context. */
  get(key: string, sid: number | string, session: Session): CachedContext | undefined {
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
    return { entries: cached.entries.slice(), ...(cached.summary ? { summary: cached.summary } : {}) };
  }

  /**
   * The entries of `session` with these idempotency keys (copies), when the cache holds every entry the
   * session has (its context from seq 1 up to its `entryCount`, no compaction left out); undefined when it
   * cannot tell, and the store is asked.
   */
  idempotent(key: string, session: Session, keys: readonly string[]): Map<string, Entry> | undefined {
    const cached = this.byKey.peek(key);
    if (
      !cached ||
      cached.sid !== session.id ||
      cached.lastSeq !== session.entryCount ||
      cached.fromSeq !== 1 ||
      session.contextFromSeq !== 1 ||
      cached.entries.length !== session.entryCount
    )
      return undefined;
    const wanted = new Set(keys);
    const found = new Map<string, Entry>();
    for (const entry of cached.entries) {
      const k = entry.idempotencyKey;
      if (k !== undefined && wanted.has(k)) found.set(k, structuredClone(entry) as Entry);
    }
    return found;
  }

  /** Remembers a context just loaded from the store; `frozen`: its entries are frozen already and kept as they are. */
  put(key: string, sid: number | string, session: Session, context: CachedContext, frozen = false): void {
    const cached: Cached = {
      sid,
      lastSeq: session.entryCount,
      fromSeq: session.contextFromSeq,
      entries: [],
      sizes: [],
      summaryBytes: 0,
      bytes: 0,
    };
    const keep = frozen ? asFrozen : frozenCopy;
    if (context.summary) setSummary(cached, keep(context.summary));
    for (const entry of context.entries) push(cached, keep(entry));
    this.store(key, cached);
  }

  /** Entries `fresh` were appended to the generation `sid`, leaving it as `session`. */
  appended(key: string, sid: number | string, session: Session, fresh: readonly Entry[]): void {
    const cached = this.byKey.peek(key);
    const first = fresh[0];
    if (!cached || !first) return;
    if (cached.sid !== sid || cached.lastSeq !== first.seq - 1 || session.contextFromSeq < cached.fromSeq) {
      this.drop(key);
      return;
    }
    for (const entry of fresh) {
      if (entry.type !== "compaction") push(cached, frozenCopy(entry));
      else if (entry.seq === session.lastCompactionSeq) setSummary(cached, frozenCopy(entry));
    }
    cached.lastSeq = session.entryCount;
    if (session.contextFromSeq !== cached.fromSeq) {
      let cut = 0;
      while (cut < cached.entries.length && (cached.entries[cut]?.seq ?? 0) < session.contextFromSeq) {
        cached.bytes -= cached.sizes[cut] ?? 0;
        cut++;
      }
      cached.entries.splice(0, cut);
      cached.sizes.splice(0, cut);
      cached.fromSeq = session.contextFromSeq;
    }
    // A new object, so the cache takes its new size (and evicts, or drops it when it grew too big).
    this.store(key, { ...cached });
  }

  drop(key: string): void {
    this.byKey.delete(key);
  }

  clear(): void {
    this.byKey.clear();
  }

  private store(key: string, cached: Cached): void {
    this.byKey.set(key, cached);
  }
}

function asFrozen<T>(value: Readonly<T>): Frozen<T> {
  return { value, bytes: heapBytes(value) };
}

function push(cached: Cached, frozen: Frozen<Entry>): void {
  cached.entries.push(frozen.value);
  cached.sizes.push(frozen.bytes);
  cached.bytes += frozen.bytes;
}

function setSummary(cached: Cached, frozen: Frozen<CompactionEntry>): void {
  cached.bytes += frozen.bytes - cached.summaryBytes;
  cached.summary = frozen.value;
  cached.summaryBytes = frozen.bytes;
}
