import { LogStore, type LogStoreOptions } from "../log-store.js";
import { MemoryDriver } from "./memory-driver.js";

/**
 * Everything in this process's memory: for tests, and as the fallback when no database can be opened.
 * Lost when the process exits. Writes go through the same group-commit writer as the stores on disk.
 */
export class MemoryStore extends LogStore {
  constructor(options: Omit<LogStoreOptions, "durability"> = {}) {
    super(new MemoryDriver(), { ...options, durability: "relaxed" });
  }
}
