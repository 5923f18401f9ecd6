import type { Pool } from "pg";
import { SessiondError } from "../../model/errors.js";
import { query } from "../../store/postgres/pool.js";
import { type CostBaseline, type CostTotals, type RunCost, roundUsd } from "./cost.js";
import { type CostRow, costOf, recordOf, type SessionRow, sessionValues } from "./rows.js";
import type { AttentionMark, RunCostRecord, RuntimeSessionRecord, RuntimeSessionStore } from "./store.js";

type PendingCost = { record: RunCostRecord; baseline: CostBaseline | undefined };

/** What the store's leases know of needs-attention marks (store/postgres/leases.ts). */
export interface AttentionByLease {
  withoutAttention(key: string): boolean;
  attentionSet(key: string): void;
}

const SESSION_COLUMNS = "agent, key, runtime, id, data, saved_at";
/** Byte order, as the SQLite file sorts: the same agent order whatever the database's locale. */
const BY_AGENT = 'ORDER BY agent COLLATE "C"';

/** One statement deleting from every table where `column = $1` (one statement: all or nothing). */
function deleteFrom(tables: readonly string[], column: string): string {
  const ctes = tables.map((table, i) => `d${i} AS (DELETE FROM ${table} WHERE ${column} = $1)`);
  return `WITH ${ctes.join(", ")} SELECT 1`;
}

const PER_KEY = ["runtime_sessions", "runtime_cost_baselines", "runtime_run_costs", "runtime_attention"];

/**
 * Runtime sessions, cost baselines, the per-run cost ledger and needs-attention marks in the PostgreSQL
 * database every gateway shares (the tables of schema migration 1), on the store's pool: a runtime
 * session saved through one process is resumed through any other, and the ledger of all of them is one.
 * Every method is one statement, committed synchronously before it resolves.
 */
export class PgRuntimeSessionStore implements RuntimeSessionStore {
  private pendingCosts: PendingCost[] = [];
  private scheduled: Promise<void> | undefined;
  /** Settles after every cost batch submitted so far: reads wait for it, as on the SQLite file. */
  private written: Promise<void> = Promise.resolve();
  private closed = false;

  /**
   * On the PostgreSQL store's pool: the store ends it. `leases`: the store's, which tell whether a key
   * whose turn this process runs has a needs-attention mark (read with its lease, in the same statement).
   */
  constructor(
    private readonly pool: Pool,
    private readonly leases?: AttentionByLease,
  ) {}

  private async rows<R extends object>(sql: string, params: unknown[]): Promise<R[]> {
    if (this.closed) throw new SessiondError("STORE_CLOSED", "the runtime sessions store is closed");
    return query<R>(this.pool, sql, params);
  }

  async get(agent: string, key: string) {
    const [row] = await this.rows<SessionRow>(
      `SELECT ${SESSION_COLUMNS} FROM runtime_sessions WHERE agent = $1 AND key = $2`,
      [agent, key],
    );
    return row && recordOf(row);
  }

  async save(record: RuntimeSessionRecord) {
    await this.rows(
      `INSERT INTO runtime_sessions (${SESSION_COLUMNS}) VALUES ($1, $2, $3, $4, $5::jsonb, $6)
       ON CONFLICT (agent, key) DO UPDATE SET runtime = excluded.runtime, id = excluded.id,
       data = excluded.data, saved_at = excluded.saved_at`,
      sessionValues(record),
    );
  }

  async forKey(key: string) {
    const rows = await this.rows<SessionRow>(
      `SELECT ${SESSION_COLUMNS} FROM runtime_sessions WHERE key = $1 ${BY_AGENT}`,
      [key],
    );
    return rows.map(recordOf);
  }

  async clear(agent: string, key: string) {
    await this.written;
    await this.rows(
      `WITH cleared AS (DELETE FROM runtime_sessions WHERE agent = $1 AND key = $2)
       DELETE FROM runtime_cost_baselines WHERE agent = $1 AND key = $2`,
      [agent, key],
    );
  }

  async clearAgent(agent: string) {
    await this.written;
    const rows = await this.rows<{ key: string }>(
      `WITH cleared AS (DELETE FROM runtime_sessions WHERE agent = $1 RETURNING key),
         baselines AS (DELETE FROM runtime_cost_baselines WHERE agent = $1)
       SELECT key FROM cleared ORDER BY key`,
      [agent],
    );
    return rows.map((r) => r.key);
  }

  async deleteKey(key: string) {
    await this.written;
    await this.rows(deleteFrom(PER_KEY, "key"), [key]);
  }

  async deleteAgent(agent: string) {
    await this.written;
    await this.rows(deleteFrom([...PER_KEY, "runtime_agents"], "agent"), [agent]);
  }

  async baseline(agent: string, key: string) {
    await this.written;
    const [row] = await this.rows<{ baseline: string }>(
      "SELECT baseline FROM runtime_cost_baselines WHERE agent = $1 AND key = $2",
      [agent, key],
    );
    return row && (JSON.parse(row.baseline) as CostBaseline);
  }

  /**
   * Cost records of every turn that ends within one event-loop turn are one statement (one commit), after
   * the batch before it: a later record of the same run, or baseline of the same session, wins.
   */
  recordCost(record: RunCostRecord, baseline?: CostBaseline): Promise<void> {
    if (this.closed) {
      return Promise.reject(new SessiondError("STORE_CLOSED", "the runtime sessions store is closed"));
    }
    this.pendingCosts.push({ record, baseline });
    if (this.scheduled) return this.scheduled;
    const previous = this.written;
    const batch = new Promise<void>((resolve) => setImmediate(resolve)).then(async () => {
      await previous;
      this.scheduled = undefined;
      await this.writeCosts(this.pendingCosts.splice(0));
    });
    this.scheduled = batch;
    this.written = batch.catch(() => {});
    return batch;
  }

  private async writeCosts(batch: readonly PendingCost[]) {
    const runs = new Map<string, RunCostRecord>();
    const baselines = new Map<string, { agent: string; key: string; baseline: CostBaseline }>();
    for (const { record, baseline } of batch) {
      runs.set(JSON.stringify([record.agent, record.key, record.runId]), record);
      if (baseline) baselines.set(JSON.stringify([record.agent, record.key]), { ...record, baseline });
    }
    const r = [...runs.values()];
    const b = [...baselines.values()];
    await query(
      this.pool,
      `WITH runs AS (
         INSERT INTO runtime_run_costs (agent, key, run_id, runtime, status, usd, at)
         SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::float8[], $7::bigint[])
         ON CONFLICT (agent, key, run_id) DO UPDATE SET runtime = excluded.runtime, status = excluded.status,
           usd = excluded.usd, at = excluded.at)
       INSERT INTO runtime_cost_baselines (agent, key, baseline)
       SELECT a, k, v::jsonb FROM unnest($8::text[], $9::text[], $10::text[]) AS t (a, k, v)
       ON CONFLICT (agent, key) DO UPDATE SET baseline = excluded.baseline`,
      [
        r.map((c) => c.agent),
        r.map((c) => c.key),
        r.map((c) => c.runId),
        r.map((c) => c.runtime),
        r.map((c) => c.status),
        r.map((c) => c.usd ?? null),
        r.map((c) => c.at),
        b.map((c) => c.agent),
        b.map((c) => c.key),
        b.map((c) => JSON.stringify(c.baseline)),
      ],
    );
  }

  async costOf(agent: string, key: string, runId: string): Promise<RunCost | undefined> {
    await this.written;
    const [row] = await this.rows<CostRow>(
      "SELECT status, usd FROM runtime_run_costs WHERE agent = $1 AND key = $2 AND run_id = $3",
      [agent, key, runId],
    );
    return row && costOf(row);
  }

  async totals(filter: { key?: string; agent?: string }): Promise<CostTotals> {
    await this.written;
    const [row] = await this.rows<CostTotals>(
      `SELECT COALESCE(SUM(usd) FILTER (WHERE status = 'priced'), 0) AS "usd",
         COUNT(*) FILTER (WHERE status = 'priced') AS "pricedRuns",
         COUNT(*) FILTER (WHERE status = 'unpriced') AS "unpricedRuns",
         COUNT(*) FILTER (WHERE status = 'ambiguous') AS "ambiguousRuns",
         COUNT(*) FILTER (WHERE status = 'not_measured') AS "notMeasuredRuns"
       FROM runtime_run_costs WHERE ($1::text IS NULL OR key = $1) AND ($2::text IS NULL OR agent = $2)`,
      [filter.key ?? null, filter.agent ?? null],
    );
    return { ...row!, usd: roundUsd(row!.usd) };
  }

  async setAttention(agent: string, key: string, error: string | undefined, at = Date.now()) {
    if (error === undefined) {
      // Every successful turn clears its mark, and almost none has one: its lease said so, no round trip.
      if (this.leases?.withoutAttention(key)) return;
      await this.rows("DELETE FROM runtime_attention WHERE agent = $1 AND key = $2", [agent, key]);
      return;
    }
    this.leases?.attentionSet(key);
    await this.rows(
      `INSERT INTO runtime_attention (agent, key, error, at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (agent, key) DO UPDATE SET error = excluded.error, at = excluded.at`,
      [agent, key, error, at],
    );
  }

  async attention(key: string) {
    return this.rows<AttentionMark>(
      `SELECT agent, key, error, at FROM runtime_attention WHERE key = $1 ${BY_AGENT}`,
      [key],
    );
  }

  async attentionKeys() {
    const rows = await this.rows<{ key: string }>("SELECT DISTINCT key FROM runtime_attention", []);
    return new Set(rows.map((r) => r.key));
  }

  async lastCwd(agent: string) {
    const [row] = await this.rows<{ cwd: string | null }>("SELECT cwd FROM runtime_agents WHERE agent = $1", [
      agent,
    ]);
    return row === undefined ? undefined : row.cwd;
  }

  async setLastCwd(agent: string, cwd: string | null) {
    await this.rows(
      `INSERT INTO runtime_agents (agent, cwd) VALUES ($1, $2)
       ON CONFLICT (agent) DO UPDATE SET cwd = excluded.cwd`,
      [agent, cwd],
    );
  }

  async close() {
    await this.written;
    this.closed = true;
  }
}
