import type { Pool } from "pg";
import { SessiondError } from "../model/errors.js";
import { inTransaction, query } from "../store/postgres/pool.js";
import { linkOf, rowValues, SHARE_COLUMNS, type ShareRow } from "./rows.js";
import type { ShareLink } from "./share.js";
import type { ShareStore } from "./store.js";

/** Any fixed number: the lock that makes the table's creation one process's at a time. */
const SCHEMA_LOCK = 0x5348_4152;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS shares (
  id text COLLATE "C" PRIMARY KEY, key text NOT NULL, session_id text NOT NULL, head_seq bigint NOT NULL,
  title text NOT NULL, created_at bigint NOT NULL
);
CREATE INDEX IF NOT EXISTS shares_key ON shares (key, created_at);
`;

/**
 * Share links as rows of the PostgreSQL store's database, on its pool: a link made through one gateway
 * opens on every gateway on the database, and each read goes to the database, so a revocation holds on
 * all of them at once (no cache to invalidate). The table is made by the first process that needs it.
 */
export class PgShareStore implements ShareStore {
  private ready: Promise<void> | undefined;
  private closed = false;

  constructor(private readonly pool: Pool) {}

  private async rows<R extends object>(sql: string, params: unknown[]): Promise<R[]> {
    if (this.closed) throw new SessiondError("STORE_CLOSED", "the share links store is closed");
    this.ready ??= inTransaction(this.pool, async (client) => {
      // CREATE … IF NOT EXISTS is not safe when two processes run it at the same moment.
      await client.query("SELECT pg_advisory_xact_lock($1)", [SCHEMA_LOCK]);
      await client.query(SCHEMA);
    }).catch((error: unknown) => {
      this.ready = undefined;
      throw error;
    });
    await this.ready;
    return query<R>(this.pool, sql, params);
  }

  async insert(link: ShareLink) {
    await this.rows(`INSERT INTO shares (${SHARE_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6)`, rowValues(link));
  }

  async get(id: string) {
    const [row] = await this.rows<ShareRow>(`SELECT ${SHARE_COLUMNS} FROM shares WHERE id = $1`, [id]);
    return row && linkOf(row);
  }

  async forKey(key: string) {
    const rows = await this.rows<ShareRow>(
      `SELECT ${SHARE_COLUMNS} FROM shares WHERE key = $1 ORDER BY created_at, id`,
      [key],
    );
    return rows.map(linkOf);
  }

  async delete(id: string) {
    const rows = await this.rows<{ id: string }>("DELETE FROM shares WHERE id = $1 RETURNING id", [id]);
    return rows.length > 0;
  }

  async deleteKey(key: string) {
    await this.rows("DELETE FROM shares WHERE key = $1", [key]);
  }

  async close() {
    this.closed = true;
  }
}
