import { join } from "node:path";
import type { Engine } from "../../engine.js";
import { MemorySeenMessages } from "./memory-seen.js";
import type { SeenMessages } from "./seen.js";

/**
 * Where an engine's channels remember the messages they took: the PostgreSQL store's database (shared by
 * every gateway on it), a SQLite file in the data directory for the embedded stores, memory for the memory
 * store (and the memory fallback: nothing of it outlives the process anyway).
 */
export async function openSeenMessages(engine: Engine): Promise<SeenMessages> {
  const backend = engine.store.backend;
  if (backend === "postgres") {
    const { PostgresStore } = await import("../../store/postgres/postgres-store.js");
    if (engine.store instanceof PostgresStore) {
      const { PgSeenMessages } = await import("./pg-seen.js");
      return PgSeenMessages.open(engine.store.pool);
    }
  }
  if (backend === "sqlite" || backend === "jsonl") {
    const { SqliteSeenMessages, SEEN_FILE } = await import("./sqlite-seen.js");
    return new SqliteSeenMessages(engine.dataDir, join(engine.dataDir, SEEN_FILE));
  }
  return new MemorySeenMessages();
}
