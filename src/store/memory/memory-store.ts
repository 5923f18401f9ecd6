import type { SearchOptions } from "../../search/budget.js";
import { normaliseSearch, type SearchQuery, type SearchResult } from "../../search/query.js";
import type { SearchableStore } from "../../search/searchable.js";
import { LogStore, type LogStoreOptions } from "../log-store.js";
import type { StoreCapabilities } from "../store.js";
import type { StoreInbox } from "../store-inbox.js";
import { MemoryDriver } from "./memory-driver.js";

/**
 * Everything in this process's memory: for tests, and as the fallback when no database can be opened.
 * Lost when the process exits. Writes go through the same group-commit writer as the stores on disk.
 */
export class MemoryStore extends LogStore implements SearchableStore {
  override readonly capabilities: StoreCapabilities = { search: true, inbox: true };
  private readonly memory: MemoryDriver;

  constructor(options: Omit<LogStoreOptions, "durability"> = {}) {
    const driver = new MemoryDriver();
    super(driver, { ...options, durability: "relaxed" });
    this.memory = driver;
  }

  /** The inbox of admitted inputs, kept with the sessions and written by this store's writer. */
  inbox(): StoreInbox {
    return this.driverInbox();
  }

  /** Messages whose text matches, best first (search/memory-index.ts). */
  search(query: SearchQuery, options?: SearchOptions): Promise<SearchResult> {
    return this.read(() => this.memory.searchIndex.search(normaliseSearch(query, Date.now()), options));
  }
}
