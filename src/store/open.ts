import { JsonlStore, type JsonlStoreOptions } from "./jsonl/jsonl-store.js";
import { MemoryStore } from "./memory/memory-store.js";
import { PostgresStore, type PostgresStoreOptions } from "./postgres/postgres-store.js";
import { SqliteStore, type SqliteStoreOptions } from "./sqlite/sqlite-store.js";
import type { Store } from "./store.js";

export type StoreConfig =
  | { backend: "memory" }
  | ({ backend: "sqlite" } & SqliteStoreOptions)
  | ({ backend: "jsonl" } & JsonlStoreOptions)
  | ({ backend: "postgres" } & PostgresStoreOptions);

/** Opens the configured backend. */
export async function openStore(config: StoreConfig): Promise<Store> {
  switch (config.backend) {
    case "memory":
      return new MemoryStore();
    case "sqlite":
      return new SqliteStore(config);
    case "jsonl":
      return new JsonlStore(config);
    case "postgres":
      return PostgresStore.open(config);
  }
}
