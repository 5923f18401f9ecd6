import type { ShareLink } from "./share.js";
import type { ShareStore } from "./store.js";

/** Share links of a memory store: gone when the process ends, like its sessions. */
export class MemoryShareStore implements ShareStore {
  private readonly links = new Map<string, ShareLink>();

  async insert(link: ShareLink) {
    this.links.set(link.id, { ...link });
  }

  async get(id: string) {
    const link = this.links.get(id);
    return link && { ...link };
  }

  async forKey(key: string) {
    return [...this.links.values()].filter((l) => l.key === key).map((l) => ({ ...l }));
  }

  async delete(id: string) {
    return this.links.delete(id);
  }

  async deleteKey(key: string) {
    for (const [id, link] of this.links) if (link.key === key) this.links.delete(id);
  }

  async close() {}
}
