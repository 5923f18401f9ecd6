import type { JsonlStoreOptions } from "./jsonl/jsonl-store.js";
import { MemoryStore } from "./memory/memory-store.js";
import type { PostgresStoreOptions } from "./postgres/postgres-store.js";
import type { SqliteStoreOptions } from "./sqlite/sqlite-store.js";
import type { Store } from "./store.js";

export type StoreConfig =
  | { backend: "memory" }
  | ({ backend: "sqlite" } & SqliteStoreOptions)
  | ({ backend: "jsonl" } & JsonlStoreOptions)
  | ({ backend: "postgres" } & PostgresStoreOptions);

/** Opens the configured backend, loading only its own modules. */
export async function openStore(config: StoreConfig): Promise<Store> {
  switch (config.backend) {
    case "memory":
      return new MemoryStore();
    case "sqlite":
      return new (await import("./sqlite/sqlite-store.js")).SqliteStore(config);
    case "jsonl":
      return new (await import("./jsonl/jsonl-store.js")).JsonlStore(config);
    case "postgres":
      return (await import("./postgres/postgres-store.js")).PostgresStore.open(config);
  }
}
