import type { Pool } from "pg";
import { query } from "../store/postgres/pool.js";
import {
  type CostLedger,
  forgottenKey,
  type LedgerEntry,
  type LedgerGroup,
  type LedgerTotal,
} from "./entry.js";
import { GROUP_SQL, sortedTotals, type TotalRow, totalsSql } from "./sql-totals.js";

const SCHEMA = `CREATE TABLE IF NOT EXISTS cost_ledger (
  seq BIGSERIAL PRIMARY KEY,
  at TEXT NOT NULL, agent TEXT NOT NULL, session_id TEXT NOT NULL, key TEXT NOT NULL,
  model TEXT NOT NULL, kind TEXT NOT NULL,
  input_tokens BIGINT, output_tokens BIGINT, cache_read_tokens BIGINT, cache_write_tokens BIGINT,
  reported_usd DOUBLE PRECISION, usd DOUBLE PRECISION, source TEXT
);
CREATE INDEX IF NOT EXISTS cost_ledger_key ON cost_ledger(key);`;

/** The ledger in the PostgreSQL database every gateway shares (its own table; the caller's pool). */
export class PgCostLedger implements CostLedger {
  private constructor(private readonly pool: Pool) {}

  static async open(pool: Pool): Promise<PgCostLedger> {
    await query(pool, SCHEMA);
    return new PgCostLedger(pool);
  }

  async record(e: LedgerEntry): Promise<void> {
    await query(
      this.pool,
      `INSERT INTO cost_ledger (at, agent, session_id, key, model, kind, input_tokens, output_tokens,
       cache_read_tokens, cache_write_tokens, reported_usd, usd, source)
       VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13)`,
      [
        e.at,
        e.agent,
        e.sessionId,
        e.key,
        e.model,
        e.kind,
        e.inputTokens ?? null,
        e.outputTokens ?? null,
        e.cacheReadTokens ?? null,
        e.cacheWriteTokens ?? null,
        e.reportedUsd ?? null,
        e.usd,
        e.source,
      ],
    );
  }

  /** Summed by the database, so a long ledger is never read into memory row by row. */
  async totals(by: LedgerGroup, filter: { since?: string } = {}): Promise<LedgerTotal[]> {
    const rows = await query<TotalRow>(this.pool, totalsSql(GROUP_SQL[by], "$1"), [filter.since ?? ""]);
    return sortedTotals(rows);
  }

  async forgetKey(key: string, secret: string): Promise<number> {
    const rows = await query<{ n: string }>(
      this.pool,
      "WITH u AS (UPDATE cost_ledger SET key = $1 WHERE key = $2 RETURNING 1) SELECT count(*) AS n FROM u",
      [forgottenKey(secret, key), key],
    );
    return Number(rows[0]?.n ?? 0);
  }

  /** The pool is the caller's: it ends it. */
  async close(): Promise<void> {}
}
