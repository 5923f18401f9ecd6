import { ContextCache } from "./context-cache.js";
import type { ForeignChanges, KeyHead, MaybePromise, StoreDriver } from "./driver.js";
import { chain } from "./maybe-promise.js";
import { RecentMap } from "./recent-map.js";
import { cloneSession } from "./session-log.js";

/** Past this many keys dropped for other writers' changes, every key counts as dropped. */
const MAX_DROPPED_KEYS = 10_000;

/**
 * What the log core remembers of its keys: their heads (current session, last generation) and their kept
 * context, and what other writers were found to have changed, numbered: when each key (or every key) was
 * last dropped for it. What was read or committed while such a change was heard is not kept.
 */
export class KeyMemory {
  readonly contexts: ContextCache;
  private readonly heads: RecentMap<string, KeyHead>;
  private foreignSeen = 0;
  private allDroppedAt = 0;
  private readonly droppedAt = new Map<string, number>();

  constructor(
    private readonly driver: StoreDriver,
    sessionCacheSize: number,
    contextCacheBytes: number | undefined,
  ) {
    this.heads = new RecentMap(Math.max(1, sessionCacheSize));
    this.contexts = new ContextCache(contextCacheBytes);
  }

  /** The number of the last change of other writers heard: `droppedSince` compares against it. */
  get seen(): number {
    return this.foreignSeen;
  }

  /** The key's head, as remembered or loaded (and then remembered, unless a change was heard meanwhile). */
  head(key: string): MaybePromise<KeyHead> {
    const cached = this.heads.get(key);
    if (cached) return cached;
    const seen = this.foreignSeen;
    return chain(this.driver.loadKey(key), (loaded) => {
      // The core's own copy: a driver may still change the object it read.
      const head: KeyHead = loaded.current ? { ...loaded, current: cloneSession(loaded.current) } : loaded;
      // Another writer's change to the key heard while this load was in flight may be newer than it.
      if (this.droppedSince(key, seen)) return head;
      this.heads.set(key, head);
      return head;
    });
  }

  /** Whether `head` is still what is remembered of the key. */
  isCurrent(key: string, head: KeyHead): boolean {
    return this.heads.get(key) === head;
  }

  /** Remembers the head a commit left the key with. */
  keep(key: string, head: KeyHead): void {
    this.heads.set(key, head);
  }

  /** Drops what is remembered of keys other writers changed (before a read that relies on it). */
  foreign(): MaybePromise<void> {
    return chain(this.driver.foreignChanges(), (changes: ForeignChanges) => {
      if (changes.kind === "none") return;
      const at = ++this.foreignSeen;
      if (changes.kind === "all" || this.droppedAt.size + changes.keys.length > MAX_DROPPED_KEYS) {
        this.allDroppedAt = at;
        this.droppedAt.clear();
      }
      if (changes.kind === "all") this.forgetAll();
      else
        for (const key of changes.keys) {
          this.forget(key);
          if (this.allDroppedAt !== at) this.droppedAt.set(key, at);
        }
    });
  }

  /** Whether what is remembered of `key` was dropped for another writer's change after `seen`. */
  droppedSince(key: string, seen: number): boolean {
    return this.allDroppedAt > seen || (this.droppedAt.get(key) ?? 0) > seen;
  }

  forget(key: string): void {
    this.heads.delete(key);
    this.contexts.drop(key);
  }

  forgetAll(): void {
    this.heads.clear();
    this.contexts.clear();
  }
}
