import type { LedgerTotal } from "./entry.js";

/** Totals of the same group (from two ledgers) added up, sorted by group. */
export function mergeTotals(totals: Iterable<LedgerTotal>): LedgerTotal[] {
  const groups = new Map<string, LedgerTotal>();
  for (const t of totals) {
    const seen = groups.get(t.group);
    if (!seen) {
      groups.set(t.group, { ...t });
      continue;
    }
    seen.calls += t.calls;
    seen.unpricedCalls += t.unpricedCalls;
    if (t.usd !== null) seen.usd = Math.round(((seen.usd ?? 0) + t.usd) * 1e9) / 1e9;
    seen.inputTokens += t.inputTokens;
    seen.outputTokens += t.outputTokens;
    seen.cacheReadTokens += t.cacheReadTokens;
    seen.cacheWriteTokens += t.cacheWriteTokens;
  }
  return [...groups.values()].sort((a, b) => (a.group < b.group ? -1 : a.group > b.group ? 1 : 0));
}
