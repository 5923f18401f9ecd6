/* The SQL the SQLite and PostgreSQL ledgers share: the entry INSERT and the totals per group. */
import type { LedgerEntry, LedgerGroup, LedgerTotal } from "./entry.js";

/** The column (or day of `at`, an ISO time) each grouping sums by; SQLite and PostgreSQL both take these. */
export const GROUP_SQL: Record<LedgerGroup, string> = {
  session: "session_id",
  agent: "agent",
  day: "substr(at, 1, 10)",
};

/** One row per group: SUM skips NULLs, so `usd` is NULL only when no call of the group has a known price. */
export function totalsSql(group: string, since: string): string {
  return `SELECT ${group} AS grp, count(*) AS calls, sum(usd) AS usd,
    sum(CASE WHEN usd IS NULL THEN 1 ELSE 0 END) AS unpriced,
    coalesce(sum(input_tokens), 0) AS input, coalesce(sum(output_tokens), 0) AS output,
    coalesce(sum(cache_read_tokens), 0) AS cache_read, coalesce(sum(cache_write_tokens), 0) AS cache_write
    FROM cost_ledger WHERE at >= ${since} GROUP BY ${group} ORDER BY ${group}`;
}

export interface TotalRow {
  grp: string;
  calls: number | string;
  usd: number | string | null;
  unpriced: number | string;
  input: number | string;
  output: number | string;
  cache_read: number | string;
  cache_write: number | string;
}

/** PostgreSQL gives bigint sums as text: every count through Number. */
export function totalOf(r: TotalRow): LedgerTotal {
  return {
    group: r.grp,
    calls: Number(r.calls),
    usd: r.usd === null ? null : Math.round(Number(r.usd) * 1e9) / 1e9,
    unpricedCalls: Number(r.unpriced),
    inputTokens: Number(r.input),
    outputTokens: Number(r.output),
    cacheReadTokens: Number(r.cache_read),
    cacheWriteTokens: Number(r.cache_write),
  };
}

/** The rows as totals in the order `totalsOf` gives (code units: the same on every database's collation). */
export function sortedTotals(rows: TotalRow[]): LedgerTotal[] {
  return rows.map(totalOf).sort((a, b) => (a.group < b.group ? -1 : a.group > b.group ? 1 : 0));
}

/** The INSERT of one entry, with `placeholder(n)` for the n-th value (`?` for SQLite, `$n` for PostgreSQL). */
export function insertSql(placeholder: (n: number) => string): string {
  const values = Array.from({ length: 13 }, (_, i) => placeholder(i + 1)).join(",");
  return `INSERT INTO cost_ledger (at, agent, session_id, key, model, kind, input_tokens, output_tokens,
    cache_read_tokens, cache_write_tokens, reported_usd, usd, source) VALUES (${values})`;
}

/** An entry's values in `insertSql`'s order; an unreported count is NULL, never 0. */
export function insertValues(e: LedgerEntry): unknown[] {
  return [
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
  ];
}
