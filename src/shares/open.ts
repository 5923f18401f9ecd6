import { join } from "node:path";
import type { EngineConfig } from "../config/engine-config.js";
import { runtimeDir } from "../runtimes/sessions/open.js";
import type { Store } from "../store/store.js";
import { MemoryShareStore } from "./memory.js";
import type { ShareStore } from "./store.js";

export const SHARES_FILE = "shares.db";

/**
 * Where share links live, as runtime sessions do: a SQLite file beside the SQLite store (in the JSONL
 * directory's `.sessiond` folder for JSONL), the PostgreSQL store's own database (shared by every gateway
 * on it), else memory (a memory store, or a store object given by the caller).
 */
export async function openShareStore(config: EngineConfig, store: Store): Promise<ShareStore> {
  if (store.backend === "postgres") {
    const { PostgresStore } = await import("../store/postgres/postgres-store.js");
    if (store instanceof PostgresStore) return new (await import("./postgres.js")).PgShareStore(store.pool);
  }
  const dir = runtimeDir(config);
  if (dir === undefined) return new MemoryShareStore();
  return new (await import("./sqlite.js")).SqliteShareStore(join(dir, SHARES_FILE));
}
