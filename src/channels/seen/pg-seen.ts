import type { Pool } from "pg";
import { query } from "../../store/postgres/pool.js";
import { SEEN_PRUNE_EVERY_MS, SEEN_RETENTION_MS, type SeenMessages } from "./seen.js";

/** Seen message ids in a table of their own in the PostgreSQL store's database, shared by every gateway. */
export class PgSeenMessages implements SeenMessages {
  private prunedAt = 0;

  private constructor(private readonly pool: Pool) {}

  /** On the store's pool (the store ends it); creates the table when it is missing. */
  static async open(pool: Pool): Promise<PgSeenMessages> {
    // Gateways starting together race to create it: the loser's "already exists" is success.
    const create = (sql: string) =>
      query(pool, sql).catch((error: unknown) => {
        const code = (error as { code?: unknown }).code;
        if (code !== "23505" && code !== "42P07") throw error;
      });
    await create(
      "CREATE TABLE IF NOT EXISTS sessiond_channel_seen (id TEXT PRIMARY KEY, at BIGINT NOT NULL)",
    );
    await create("CREATE INDEX IF NOT EXISTS sessiond_channel_seen_at ON sessiond_channel_seen (at)");
    return new PgSeenMessages(pool);
  }

  async claim(id: string, at: number): Promise<boolean> {
    if (at - this.prunedAt > SEEN_PRUNE_EVERY_MS) {
      this.prunedAt = at;
      await query(this.pool, "DELETE FROM sessiond_channel_seen WHERE at < $1", [at - SEEN_RETENTION_MS]);
    }
    const rows = await query(
      this.pool,
      "INSERT INTO sessiond_channel_seen (id, at) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING RETURNING id",
      [id, at],
    );
    return rows.length === 1;
  }

  async forget(id: string): Promise<void> {
    await query(this.pool, "DELETE FROM sessiond_channel_seen WHERE id = $1", [id]);
  }

  async close(): Promise<void> {}
}
