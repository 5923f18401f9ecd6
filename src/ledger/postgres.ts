import type { Pool } from "pg";
import {
  type CostLedger,
  forgottenKey,
  type LedgerEntry,
  type LedgerGroup,
  type LedgerTotal,
} from "./entry.js";
import { GROUP_SQL, insertSql, insertValues, sortedTotals, type TotalRow, totalsSql } from "./sql.js";

const INSERT = insertSql((n) => `$${n}`);

/**
 * CREATE … IF NOT EXISTS is not safe when two processes run it at the same moment (gateways starting
 * together): the statements run as one simple query, one implicit transaction, under an advisory lock.
 */
const SCHEMA = `SELECT pg_advisory_xact_lock(${0x4c45_4447});
CREATE TABLE IF NOT EXISTS cost_ledger (
  seq BIGSERIAL PRIMARY KEY,
  at TEXT NOT NULL, agent TEXT NOT NULL, session_id TEXT NOT NULL, key TEXT NOT NULL,
  model TEXT NOT NULL, kind TEXT NOT NULL,
  input_tokens BIGINT, output_tokens BIGINT, cache_read_tokens BIGINT, cache_write_tokens BIGINT,
  reported_usd DOUBLE PRECISION, usd DOUBLE PRECISION, source TEXT
);
CREATE INDEX IF NOT EXISTS cost_ledger_key ON cost_ledger(key);`;

export type PgQuery = <R extends object>(pool: Pool, sql: string, params?: unknown[]) => Promise<R[]>;

const plainQuery: PgQuery = async <R extends object>(pool: Pool, sql: string, params: unknown[] = []) =>
  (await pool.query<R>(sql, params)).rows;

/** The ledger in the PostgreSQL database every gateway shares (its own table; the caller's pool). */
export class PgCostLedger implements CostLedger {
  private constructor(
    private readonly pool: Pool,
    private readonly run: PgQuery,
  ) {}

  /**
   * `run` is the store's query (src/store/postgres/pool.ts, which names a lost connection as such); passed in so
   * that this module, loaded with the engine, does not load the PostgreSQL store's modules.
   */
  static async open(pool: Pool, run: PgQuery = plainQuery): Promise<PgCostLedger> {
    await run(pool, SCHEMA);
    return new PgCostLedger(pool, run);
  }

  async record(e: LedgerEntry): Promise<void> {
    await this.run(this.pool, INSERT, insertValues(e));
  }

  /** Summed by the database, so a long ledger is never read into memory row by row. */
  async totals(by: LedgerGroup, filter: { since?: string } = {}): Promise<LedgerTotal[]> {
    const rows = await this.run<TotalRow>(this.pool, totalsSql(GROUP_SQL[by], "$1"), [filter.since ?? ""]);
    return sortedTotals(rows);
  }

  async forgetKey(key: string, secret: string): Promise<number> {
    const rows = await this.run<{ n: string }>(
      this.pool,
      "WITH u AS (UPDATE cost_ledger SET key = $1 WHERE key = $2 RETURNING 1) SELECT count(*) AS n FROM u",
      [forgottenKey(secret, key), key],
    );
    return Number(rows[0]?.n ?? 0);
  }

  /** The pool is the caller's: it ends it. */
  async close(): Promise<void> {}
}
