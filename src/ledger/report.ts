import { SessiondError } from "../model/errors.js";
import { parseTime } from "../search/query-params.js";
import { type CostLedger, emptyTotal, type LedgerGroup, type LedgerTotal } from "./entry.js";
import { mergeTotals } from "./merge.js";

export const LEDGER_GROUPS: readonly LedgerGroup[] = ["session", "agent", "day"];

/** What `sessiond cost`, `GET /api/cost` and the dashboard show: totals per group and over all of them. */
export interface CostReport {
  by: LedgerGroup;
  /** ISO time: only calls at or after it count; absent: every call. */
  since?: string;
  groups: LedgerTotal[];
  /** Over every group (its `group` is `all`). */
  total: LedgerTotal;
  /** Some calls have no known price: each `usd` shown is a lower bound (null when none is known at all). */
  lowerBound: boolean;
}

/** `by` and `since` as text (query string, CLI options), checked: a bad one is INVALID_ARGUMENT. */
export function costQueryFrom(
  by: string | undefined,
  since: string | undefined,
): { by: LedgerGroup; since?: string } {
  const group = (by ?? "day").trim() || "day";
  if (!(LEDGER_GROUPS as readonly string[]).includes(group)) {
    throw new SessiondError(
      "INVALID_ARGUMENT",
      `by must be one of ${LEDGER_GROUPS.join(", ")}, got ${JSON.stringify(group)}`,
      {
        details: { by: group },
      },
    );
  }
  const text = since?.trim();
  if (!text) return { by: group as LedgerGroup };
  return { by: group as LedgerGroup, since: new Date(parseTime("since", text)).toISOString() };
}

export async function costReport(
  ledger: CostLedger,
  query: { by: LedgerGroup; since?: string },
): Promise<CostReport> {
  const groups = await ledger.totals(query.by, query.since ? { since: query.since } : {});
  const [total] = mergeTotals(groups.map((g) => ({ ...g, group: "all" })));
  const all = total ?? emptyTotal("all");
  return {
    by: query.by,
    ...(query.since ? { since: query.since } : {}),
    groups,
    total: all,
    lowerBound: all.unpricedCalls > 0,
  };
}

/** A USD figure as the surfaces print it: `unknown` when no price is known, `≥` when some are missing. */
export function formatUsd(total: Pick<LedgerTotal, "usd" | "unpricedCalls">): string {
  if (total.usd === null) return "unknown";
  const figure = `$${total.usd.toFixed(total.usd !== 0 && Math.abs(total.usd) < 0.01 ? 6 : 2)}`;
  return total.unpricedCalls > 0 ? `≥ ${figure}` : figure;
}
