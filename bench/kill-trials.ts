/**
 * SIGKILL trials: `node dist/bench/kill-trials.js --store jsonl --kills 30 --chat 16 --openai 4`. A real
 * `sessiond serve` is killed at random moments under load and restarted on the same data; then the stored
 * data must hold every acknowledged input exactly once and no input twice. Exits 1 when it does not.
 * docs/development.md says more.
 */
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import type { TrialStore } from "./kill-trials/gateway.js";
import { runTrials, type TrialReport } from "./kill-trials/trials.js";
import { startPostgres } from "./postgres-cluster.js";

const { values } = parseArgs({
  options: {
    store: { type: "string", default: "sqlite,jsonl,postgres" },
    kills: { type: "string", default: "10" },
    chat: { type: "string", default: "16" },
    openai: { type: "string", default: "4" },
    async: { type: "string", default: "0" },
    "up-ms": { type: "string", default: "300,2000" },
    "last-up-ms": { type: "string", default: "1000" },
    "model-delay-ms": { type: "string", default: "20" },
    "lease-ttl-ms": { type: "string", default: "1000" },
    cli: { type: "string", default: fileURLToPath(new URL("../bundle/main.js", import.meta.url)) },
    json: { type: "boolean", default: false },
    keep: { type: "boolean", default: false },
  },
});

const stores = values.store.split(",").map((s) => s.trim()) as TrialStore[];
for (const store of stores) {
  if (!["sqlite", "jsonl", "postgres"].includes(store)) throw new Error(`no store ${JSON.stringify(store)}`);
}
const [minUp, maxUp] = values["up-ms"].split(",").map(Number);
const reports: Record<string, TrialReport> = {};
let failed = false;
for (const store of stores) {
  const cluster = store === "postgres" ? await startPostgres() : undefined;
  try {
    const started = Date.now();
    const report = await runTrials({
      store,
      cli: values.cli,
      ...(cluster
        ? { databaseUrl: await cluster.createDatabase(), leaseTtlMs: Number(values["lease-ttl-ms"]) }
        : {}),
      kills: Number(values.kills),
      chatClients: Number(values.chat),
      openAiClients: Number(values.openai),
      asyncClients: Number(values.async),
      upMs: [minUp ?? 300, maxUp ?? minUp ?? 2000],
      lastUpMs: Number(values["last-up-ms"]),
      modelDelayMs: Number(values["model-delay-ms"]),
      keepOnFailure: values.keep,
      ...(values.json ? {} : { log: (line: string) => process.stderr.write(`${store}: ${line}\n`) }),
    });
    reports[store] = report;
    const lost = Object.values(report.drivers).reduce((n, c) => n + c.lost, 0);
    const bad = report.doubles.length + report.repeatedKeys.length + lost;
    if (bad > 0) failed = true;
    if (!values.json) print(store, report, Date.now() - started);
  } finally {
    await cluster?.remove();
  }
}
if (values.json) process.stdout.write(`${JSON.stringify(reports, null, 2)}\n`);
process.exitCode = failed ? 1 : 0;

function print(store: string, report: TrialReport, ms: number): void {
  const lines = [
    `${store}: ${report.kills} SIGKILLs in ${(ms / 1000).toFixed(0)} s, ${report.sessions} sessions, ${report.userEntries} user entries`,
  ];
  for (const [driver, c] of Object.entries(report.drivers)) {
    lines.push(
      `  ${driver.padEnd(7)} sent ${c.sent}, acknowledged ${c.acked} (stored once ${c.ackedOnce}, lost ${c.lost}), ` +
        `unacknowledged but stored ${c.unackedStored}, stored twice ${c.doubled}`,
    );
  }
  const r = report.recovered;
  lines.push(
    `  recovery: ${r.requeued} queued again, ${r.answered} already answered, ${r.interrupted} interrupted`,
  );
  if (Object.keys(report.statuses).length > 0)
    lines.push(`  other answers: ${JSON.stringify(report.statuses)}`);
  lines.push(`  idempotency keys on two user entries: ${report.repeatedKeys.length}`);
  if (report.keptDir) lines.push(`  data kept in ${report.keptDir}`);
  for (const double of report.doubles.slice(0, 5))
    lines.push(`  twice: ${double.text} ${JSON.stringify(double.stored)}`);
  process.stdout.write(`${lines.join("\n")}\n`);
}
