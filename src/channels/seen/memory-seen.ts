import { LRUCache } from "lru-cache";
import { SEEN_RETENTION_MS, type SeenMessages } from "./seen.js";

/** For the memory store: ids kept up to `maxBytes` (oldest forgotten first) and the retention. */
export class MemorySeenMessages implements SeenMessages {
  private readonly ids: LRUCache<string, number>;

  constructor(maxBytes = 4 * 1024 * 1024) {
    this.ids = new LRUCache<string, number>({
      maxSize: maxBytes,
      sizeCalculation: (_, id) => Math.max(1, id.length),
    });
  }

  async claim(id: string, at: number): Promise<boolean> {
    const seen = this.ids.peek(id);
    if (seen !== undefined && at - seen < SEEN_RETENTION_MS) return false;
    this.ids.set(id, at);
    return true;
  }

  async forget(id: string): Promise<void> {
    this.ids.delete(id);
  }

  async close(): Promise<void> {}
}
