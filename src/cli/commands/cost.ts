import { type Command, Option } from "commander";
import type { LedgerTotal } from "../../ledger/entry.js";
import { type CostReport, costQueryFrom, costReport, formatUsd, LEDGER_GROUPS } from "../../ledger/report.js";
import { type GlobalOptions, withEngine } from "../context.js";
import { renderTable } from "../format/table.js";
import type { CliIo } from "../io.js";

interface CostOptions extends GlobalOptions {
  by?: string;
  since?: string;
  json?: boolean;
}

/** `cost --by session|agent|day [--since T] [--json]`: the cost ledger's totals (src/ledger). */
export function registerCost(program: Command, io: CliIo): void {
  program
    .command("cost")
    .description(
      "what the model calls cost (turns, tool rounds, compaction, titles), per session, agent or UTC day; kept after a session's reset, deletion and erasure",
    )
    .addOption(new Option("--by <group>", "group by").choices([...LEDGER_GROUPS]).default("day"))
    .option("--since <time>", "only calls at or after (ISO 8601 date or ms)")
    .option("--json", "print { by, since?, groups: [...], total, lowerBound }")
    .action(async (_options: unknown, command: Command) => {
      const options = command.optsWithGlobals<CostOptions>();
      const query = costQueryFrom(options.by, options.since);
      const report = await withEngine(options, io, { readOnly: true }, (engine) =>
        costReport(engine.agents.ledger, query),
      );
      io.stdout(options.json ? `${JSON.stringify(report, null, 2)}\n` : costText(report));
    });
}

const COLUMNS = [
  { header: "", max: 40 },
  { header: "calls", align: "right" as const },
  { header: "usd", align: "right" as const },
  { header: "unpriced", align: "right" as const },
  { header: "input", align: "right" as const },
  { header: "output", align: "right" as const },
  { header: "cache read", align: "right" as const },
  { header: "cache write", align: "right" as const },
];

function row(t: LedgerTotal): string[] {
  const n = (v: number) => v.toLocaleString("en-US");
  return [
    t.group,
    n(t.calls),
    formatUsd(t),
    n(t.unpricedCalls),
    n(t.inputTokens),
    n(t.outputTokens),
    n(t.cacheReadTokens),
    n(t.cacheWriteTokens),
  ];
}

/** The totals as a table, the sum last; says when a figure is a lower bound or unknown. */
export function costText(report: CostReport): string {
  if (report.groups.length === 0)
    return `No model calls recorded${report.since ? ` since ${report.since}` : ""}.\n`;
  const columns = [{ ...COLUMNS[0], header: report.by } as (typeof COLUMNS)[number], ...COLUMNS.slice(1)];
  let text = renderTable(columns, [...report.groups.map(row), row(report.total)]);
  const { total } = report;
  if (total.usd === null)
    text += `No call has a known price: the cost is unknown (set models.<name>.price).\n`;
  else if (report.lowerBound)
    text += `${total.unpricedCalls} of ${total.calls} calls have no known price: figures marked ≥ are lower bounds.\n`;
  return text;
}
