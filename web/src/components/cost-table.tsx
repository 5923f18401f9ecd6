import { useState } from "preact/hooks";
import { count, usd } from "../format";
import { useJson } from "../hooks";
import type { CostReport, CostTotal } from "../types";

const GROUPS = [
  { value: "day", label: "Day (UTC)" },
  { value: "agent", label: "Agent" },
  { value: "session", label: "Session" },
] as const;

const FIGURES = ["Calls", "Cost", "Unpriced", "Input", "Output", "Cache read", "Cache write"];

/** A cost as the ledger knows it: unknown when no price is known, `≥` when some calls have none. */
export function costText(total: Pick<CostTotal, "usd" | "unpricedCalls">): string {
  if (total.usd === null) return "unknown";
  return total.unpricedCalls > 0 ? `≥ ${usd(total.usd)}` : usd(total.usd);
}

/** The cost ledger's totals (GET /api/cost) since `since`, per day, agent or session. */
export function CostTable({ since, tick }: { since: string; tick: number }) {
  const [by, setBy] = useState<(typeof GROUPS)[number]["value"]>("day");
  const { data: report, error } = useJson<CostReport>(
    `/api/cost?${new URLSearchParams({ by, since })}`,
    tick,
  );

  const row = (t: CostTotal, label: string) => (
    <tr key={label} data-group={label}>
      <th scope="row" title={label}>
        {label}
      </th>
      <td class="num">{count(t.calls)}</td>
      <td class="num c-usd">{costText(t)}</td>
      <td class="num">{count(t.unpricedCalls)}</td>
      <td class="num">{count(t.inputTokens)}</td>
      <td class="num">{count(t.outputTokens)}</td>
      <td class="num">{count(t.cacheReadTokens)}</td>
      <td class="num">{count(t.cacheWriteTokens)}</td>
    </tr>
  );

  return (
    <section class="cost" aria-labelledby="cost-title">
      <div class="chat-head">
        <h2 id="cost-title">Cost of model calls</h2>
        <label class="inline">
          <span>Per</span>
          <select value={by} onChange={(e) => setBy(e.currentTarget.value as typeof by)}>
            {GROUPS.map((g) => (
              <option key={g.value} value={g.value}>
                {g.label}
              </option>
            ))}
          </select>
        </label>
      </div>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {report && report.groups.length === 0 && <p class="muted">No model calls in this window.</p>}
      {report && report.groups.length > 0 && (
        <div class="table-wrap cost-wrap">
          <table class="cost-table">
            <thead>
              <tr>
                <th scope="col">{GROUPS.find((g) => g.value === report.by)?.label}</th>
                {FIGURES.map((name) => (
                  <th key={name} scope="col" class="num">
                    {name}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {report.groups.map((g) => row(g, g.group))}
              {row(report.total, "Total")}
            </tbody>
          </table>
        </div>
      )}
      {report?.lowerBound && (
        <p class="muted" data-testid="cost-note">
          {report.total.usd === null
            ? "No call has a known price: the cost is unknown (set a price for the model in the config)."
            : `${report.total.unpricedCalls} of ${report.total.calls} calls have no known price: figures marked ≥ are lower bounds.`}
        </p>
      )}
    </section>
  );
}
