import { MemoryStore } from "./memory/memory-store.js";
import { SqliteStore } from "./sqlite/sqlite-store.js";
import type { Durability, Store } from "./store.js";

export type StoreConfig =
  | { backend: "memory" }
  | {
      backend: "sqlite";
      path: string;
      durability?: Durability;
      commitIntervalMs?: number;
      maxBatch?: number;
    };

/** Opens the configured backend. */
export async function openStore(config: StoreConfig): Promise<Store> {
  switch (config.backend) {
    case "memory":
      return new MemoryStore();
    case "sqlite":
      return new SqliteStore(config);
  }
}
