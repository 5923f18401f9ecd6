import { MemoryStore } from "./memory/memory-store.js";
import { SqliteStore, type SqliteStoreOptions } from "./sqlite/sqlite-store.js";
import type { Store } from "./store.js";

export type StoreConfig = { backend: "memory" } | ({ backend: "sqlite" } & SqliteStoreOptions);

/** Opens the configured backend. */
export async function openStore(config: StoreConfig): Promise<Store> {
  switch (config.backend) {
    case "memory":
      return new MemoryStore();
    case "sqlite":
      return new SqliteStore(config);
  }
}
