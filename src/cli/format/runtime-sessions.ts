import type { WorkSession } from "../../model/work-session.js";
import type { ConversationRuntimeView } from "../../runtimes/sessions/agent-runtimes.js";
import type { CostTotals } from "../../runtimes/sessions/cost.js";
import { renderTable } from "./table.js";

export const NO_SESSION_YET = "No session here yet";

/** Dollars to the cent, with the runs that had no figure or an ambiguous one said. */
export function formatCost(cost: CostTotals): string {
  const parts = [
    `$${cost.usd.toFixed(cost.usd !== 0 && cost.usd < 0.01 ? 4 : 2)} over ${cost.pricedRuns} priced`,
  ];
  if (cost.unpricedRuns) parts.push(`${cost.unpricedRuns} unpriced`);
  if (cost.ambiguousRuns) parts.push(`${cost.ambiguousRuns} ambiguous`);
  const counted = cost.pricedRuns + cost.unpricedRuns + cost.ambiguousRuns;
  const text = `${parts.join(", ")} ${counted === 1 ? "run" : "runs"}`;
  return cost.notMeasuredRuns ? `${text}; ${notMeasuredText(cost.notMeasuredRuns)}` : text;
}

/** LoCrew's words for the first run seen on a session that already existed. */
export function notMeasuredText(runs: number): string {
  return runs === 1 ? "1 run: cost not measured" : `${runs} runs: cost not measured`;
}

/** Each member agent's short runtime session id, or "No session here yet"; then cost and attention. */
export function formatRuntimeSessions(agents: readonly string[], view: ConversationRuntimeView): string {
  const members = [...new Set([...agents, ...view.runtimeSessions.map((s) => s.agent)])];
  const rows = members.map((agent) => {
    const session = view.runtimeSessions.find((s) => s.agent === agent);
    return session ? [agent, session.runtime, session.shortId] : [agent, "", NO_SESSION_YET];
  });
  const out = [
    `\nruntime sessions:\n`,
    renderTable([{ header: "AGENT" }, { header: "RUNTIME" }, { header: "SESSION" }], rows).replace(
      /^(?=.)/gm,
      "  ",
    ),
    `cost: ${formatCost(view.cost)}\n`,
  ];
  if (view.needsAttention) out.push("needs attention: the last run of an agent here failed\n");
  for (const work of view.workSessions) out.push(`${workSessionLine(work)}\n`);
  return out.join("");
}

/** LoCrew's work session, said as what it allows and until when (UTC). */
export function workSessionLine(work: WorkSession, where = ""): string {
  const until = `${new Date(work.until).toISOString().slice(0, 16).replace("T", " ")} UTC`;
  return `work session: ${work.agent} may write without asking${where} until ${until}`;
}
