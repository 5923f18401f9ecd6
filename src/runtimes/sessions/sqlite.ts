import { dirname } from "node:path";
import type Database from "better-sqlite3";
import { makeDirSync } from "../../fs/make-dir.js";
import { SessiondError } from "../../model/errors.js";
import { sqliteDatabase } from "../../store/sqlite/better-sqlite3.js";
import { type CostBaseline, type CostTotals, emptyTotals, type RunCost, roundUsd } from "./cost.js";
import { type CostRow, costOf, recordOf, type SessionRow, sessionValues } from "./rows.js";
import type { AttentionMark, RunCostRecord, RuntimeSessionRecord, RuntimeSessionStore } from "./store.js";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS runtime_sessions (
  agent TEXT NOT NULL, key TEXT NOT NULL, runtime TEXT NOT NULL, id TEXT NOT NULL, data TEXT,
  saved_at INTEGER NOT NULL, PRIMARY KEY (agent, key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS runtime_sessions_key ON runtime_sessions (key);
CREATE TABLE IF NOT EXISTS runtime_cost_baselines (
  agent TEXT NOT NULL, key TEXT NOT NULL, baseline TEXT NOT NULL, PRIMARY KEY (agent, key)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS runtime_run_costs (
  agent TEXT NOT NULL, key TEXT NOT NULL, run_id TEXT NOT NULL, runtime TEXT NOT NULL,
  status TEXT NOT NULL, usd REAL, at INTEGER NOT NULL, PRIMARY KEY (agent, key, run_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS runtime_run_costs_key ON runtime_run_costs (key);
CREATE TABLE IF NOT EXISTS runtime_attention (
  agent TEXT NOT NULL, key TEXT NOT NULL, error TEXT NOT NULL, at INTEGER NOT NULL, PRIMARY KEY (agent, key)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS runtime_agents (agent TEXT PRIMARY KEY, cwd TEXT) WITHOUT ROWID;
`;

/**
 * Runtime sessions in their own SQLite file, WAL. A saved runtime session id is committed with
 * synchronous=FULL (on disk before the run goes on); cost records and marks with NORMAL: they survive a
 * process crash, and one fsync per turn of every agent would cost more than they are worth. Every method
 * is one statement or one transaction.
 */
export class SqliteRuntimeSessionStore implements RuntimeSessionStore {
  private readonly db: Database.Database;
  private readonly statements = new Map<string, Database.Statement>();
  private pendingCosts: Array<{ record: RunCostRecord; baseline: CostBaseline | undefined }> = [];
  private costsWritten: Promise<void> | undefined;

  constructor(readonly path: string) {
    try {
      if (path !== ":memory:") makeDirSync(dirname(path));
      this.db = new (sqliteDatabase())(path);
      this.db.pragma("journal_mode = WAL");
      this.db.pragma("synchronous = NORMAL");
      this.db.pragma("busy_timeout = 5000");
      // A deleted key's rows leave no bytes in the file's free space (erasure by subject).
      this.db.pragma("secure_delete = ON");
      this.db.exec(SCHEMA);
    } catch (error) {
      throw new SessiondError(
        "STORE_UNAVAILABLE",
        `the runtime sessions database failed (${path}): ${String(error)}`,
        {
          cause: error,
        },
      );
    }
  }

  /** Each statement is prepared once: preparing costs more than running these. */
  private sql<P extends unknown[] = unknown[], R = unknown>(text: string): Database.Statement<P, R> {
    let statement = this.statements.get(text);
    if (!statement) {
      statement = this.db.prepare(text);
      this.statements.set(text, statement);
    }
    return statement as unknown as Database.Statement<P, R>;
  }

  async get(agent: string, key: string) {
    const row = this.sql<[string, string], SessionRow>(
      "SELECT * FROM runtime_sessions WHERE agent = ? AND key = ?",
    ).get(agent, key);
    return row && recordOf(row);
  }

  async save(record: RuntimeSessionRecord) {
    // The one write that must not be lost to a power cut: the id is what the next run resumes.
    this.db.pragma("synchronous = FULL");
    try {
      this.insertSession(record);
    } finally {
      this.db.pragma("synchronous = NORMAL");
    }
  }

  private insertSession(record: RuntimeSessionRecord) {
    this.sql(
      `INSERT INTO runtime_sessions (agent, key, runtime, id, data, saved_at) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (agent, key) DO UPDATE SET runtime = excluded.runtime, id = excluded.id,
         data = excluded.data, saved_at = excluded.saved_at`,
    ).run(...sessionValues(record));
  }

  async forKey(key: string) {
    return this.sql<[string], SessionRow>("SELECT * FROM runtime_sessions WHERE key = ? ORDER BY agent")
      .all(key)
      .map(recordOf);
  }

  async clear(agent: string, key: string) {
    await this.costsWritten;
    this.db.transaction(() => {
      this.sql("DELETE FROM runtime_sessions WHERE agent = ? AND key = ?").run(agent, key);
      this.sql("DELETE FROM runtime_cost_baselines WHERE agent = ? AND key = ?").run(agent, key);
    })();
  }

  async clearAgent(agent: string) {
    await this.costsWritten;
    return this.db.transaction(() => {
      const keys = this.sql<[string], { key: string }>(
        "SELECT key FROM runtime_sessions WHERE agent = ? ORDER BY key",
      )
        .all(agent)
        .map((r) => r.key);
      this.sql("DELETE FROM runtime_sessions WHERE agent = ?").run(agent);
      this.sql("DELETE FROM runtime_cost_baselines WHERE agent = ?").run(agent);
      return keys;
    })();
  }

  async deleteKey(key: string) {
    await this.costsWritten;
    this.db.transaction(() => {
      for (const table of [
        "runtime_sessions",
        "runtime_cost_baselines",
        "runtime_run_costs",
        "runtime_attention",
      ]) {
        this.sql(`DELETE FROM ${table} WHERE key = ?`).run(key);
      }
    })();
    // Older WAL frames still hold the rows: copied back and emptied (erasure by subject).
    this.db.pragma("wal_checkpoint(TRUNCATE)");
  }

  async deleteAgent(agent: string) {
    await this.costsWritten;
    this.db.transaction(() => {
      for (const table of [
        "runtime_sessions",
        "runtime_cost_baselines",
        "runtime_run_costs",
        "runtime_attention",
        "runtime_agents",
      ]) {
        this.sql(`DELETE FROM ${table} WHERE agent = ?`).run(agent);
      }
    })();
  }

  async baseline(agent: string, key: string) {
    await this.costsWritten;
    const row = this.sql<[string, string], { baseline: string }>(
      "SELECT baseline FROM runtime_cost_baselines WHERE agent = ? AND key = ?",
    ).get(agent, key);
    return row && (JSON.parse(row.baseline) as CostBaseline);
  }

  /**
   * Cost records of every turn that ends within one event-loop turn are written in one transaction (a turn
   * of every agent records one, so one commit each would cost more than the rest of the bookkeeping).
   */
  recordCost(record: RunCostRecord, baseline?: CostBaseline): Promise<void> {
    this.pendingCosts.push({ record, baseline });
    this.costsWritten ??= new Promise<void>((resolve, reject) => {
      setImmediate(() => {
        const batch = this.pendingCosts.splice(0);
        this.costsWritten = undefined;
        try {
          this.writeCosts(batch);
          resolve();
        } catch (error) {
          reject(error);
        }
      });
    });
    return this.costsWritten;
  }

  private writeCosts(batch: ReadonlyArray<{ record: RunCostRecord; baseline: CostBaseline | undefined }>) {
    this.db.transaction(() => {
      for (const { record, baseline } of batch) {
        this.sql(
          `INSERT OR REPLACE INTO runtime_run_costs (agent, key, run_id, runtime, status, usd, at)
           VALUES (?, ?, ?, ?, ?, ?, ?)`,
        ).run(
          record.agent,
          record.key,
          record.runId,
          record.runtime,
          record.status,
          record.usd ?? null,
          record.at,
        );
        if (baseline) {
          this.sql(
            "INSERT OR REPLACE INTO runtime_cost_baselines (agent, key, baseline) VALUES (?, ?, ?)",
          ).run(record.agent, record.key, JSON.stringify(baseline));
        }
      }
    })();
  }

  async costOf(agent: string, key: string, runId: string): Promise<RunCost | undefined> {
    await this.costsWritten;
    const row = this.sql<[string, string, string], CostRow>(
      "SELECT status, usd FROM runtime_run_costs WHERE agent = ? AND key = ? AND run_id = ?",
    ).get(agent, key, runId);
    return row && costOf(row);
  }

  async totals(filter: { key?: string; agent?: string }): Promise<CostTotals> {
    await this.costsWritten;
    const where: string[] = [];
    const params: string[] = [];
    if (filter.key !== undefined) {
      where.push("key = ?");
      params.push(filter.key);
    }
    if (filter.agent !== undefined) {
      where.push("agent = ?");
      params.push(filter.agent);
    }
    const row = this.sql<string[], CostTotals>(
      `SELECT COALESCE(SUM(CASE WHEN status = 'priced' THEN usd END), 0) AS usd,
           COALESCE(SUM(status = 'priced'), 0) AS pricedRuns,
           COALESCE(SUM(status = 'unpriced'), 0) AS unpricedRuns,
           COALESCE(SUM(status = 'ambiguous'), 0) AS ambiguousRuns,
           COALESCE(SUM(status = 'not_measured'), 0) AS notMeasuredRuns
         FROM runtime_run_costs ${where.length ? `WHERE ${where.join(" AND ")}` : ""}`,
    ).get(...params);
    return row ? { ...row, usd: roundUsd(row.usd) } : emptyTotals();
  }

  async setAttention(agent: string, key: string, error: string | undefined, at = Date.now()) {
    if (error === undefined) {
      // Every successful run clears its mark, and almost none has one: a read costs less than a write.
      const marked = this.sql("SELECT 1 FROM runtime_attention WHERE agent = ? AND key = ?").get(agent, key);
      if (marked) this.sql("DELETE FROM runtime_attention WHERE agent = ? AND key = ?").run(agent, key);
      return;
    }
    this.sql("INSERT OR REPLACE INTO runtime_attention (agent, key, error, at) VALUES (?, ?, ?, ?)").run(
      agent,
      key,
      error,
      at,
    );
  }

  async attention(key: string) {
    return this.sql<[string], AttentionMark>(
      "SELECT agent, key, error, at FROM runtime_attention WHERE key = ? ORDER BY agent",
    ).all(key);
  }

  async attentionKeys() {
    const rows = this.sql<[], { key: string }>("SELECT DISTINCT key FROM runtime_attention").all();
    return new Set(rows.map((r) => r.key));
  }

  async lastCwd(agent: string) {
    const row = this.sql<[string], { cwd: string | null }>(
      "SELECT cwd FROM runtime_agents WHERE agent = ?",
    ).get(agent);
    return row === undefined ? undefined : row.cwd;
  }

  async setLastCwd(agent: string, cwd: string | null) {
    this.sql("INSERT OR REPLACE INTO runtime_agents (agent, cwd) VALUES (?, ?)").run(agent, cwd);
  }

  async close() {
    await this.costsWritten;
    if (this.db.open) this.db.close();
  }
}
