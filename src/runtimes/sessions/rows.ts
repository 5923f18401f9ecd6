import type { RunCost, RunCostStatus } from "./cost.js";
import type { RuntimeSessionRecord } from "./store.js";

/** A `runtime_sessions` row, as the SQLite file and the PostgreSQL database both return it. */
export interface SessionRow {
  agent: string;
  key: string;
  runtime: string;
  id: string;
  /** JSON text (PostgreSQL's jsonb comes back as its text: store/postgres/pool.ts). */
  data: string | null;
  saved_at: number;
}

export interface CostRow {
  status: RunCostStatus;
  usd: number | null;
}

/** A record's values in the order of the `runtime_sessions` columns both stores insert (agent … saved_at). */
export function sessionValues(
  record: RuntimeSessionRecord,
): [string, string, string, string, string | null, number] {
  return [
    record.agent,
    record.key,
    record.runtime,
    record.id,
    record.data ? JSON.stringify(record.data) : null,
    record.savedAt,
  ];
}

export function recordOf(row: SessionRow): RuntimeSessionRecord {
  const record: RuntimeSessionRecord = {
    agent: row.agent,
    key: row.key,
    runtime: row.runtime,
    id: row.id,
    savedAt: row.saved_at,
  };
  if (row.data !== null) record.data = JSON.parse(row.data) as Record<string, string>;
  return record;
}

export function costOf(row: CostRow): RunCost {
  return row.usd === null ? { status: row.status } : { status: row.status, usd: row.usd };
}
