import { LRUCache } from "lru-cache";

/**
 * The platform message ids seen lately, oldest forgotten first once `maxBytes` is passed (an id counts its
 * length). It catches a redelivery while the first copy's turn is still queued; the stored entry's
 * idempotency key catches the rest. Never read with `get`, so the cache's order is the order ids arrived.
 */
export class RecentIds {
  private readonly ids: LRUCache<string, true>;

  constructor(maxBytes = 1024 * 1024) {
    this.ids = new LRUCache<string, true>({
      maxSize: maxBytes,
      sizeCalculation: (_, id) => Math.max(1, id.length),
    });
  }

  /** True when `id` was new (and is now remembered). */
  add(id: string): boolean {
    if (this.ids.has(id)) return false;
    this.ids.set(id, true);
    return true;
  }

  has(id: string): boolean {
    return this.ids.has(id);
  }

  delete(id: string): void {
    this.ids.delete(id);
  }
}
