/**
 * `npm run bench [-- --quick] [-- --json] [-- --only gateway,context]`: each figure beside a baseline measured in the same run on
 * the same disk. Targets are informational: the exit code is 0 unless something crashed.
 */
import { fork, spawnSync } from "node:child_process";
import { cpus, totalmem } from "node:os";
import { fileURLToPath } from "node:url";
import { concurrentAppends, sequentialAppends } from "./appends.js";
import { contextAssembly } from "./context-assembly.js";
import { contextLoad } from "./context-load.js";
import { dashboardReads } from "./dashboard.js";
import { sealedAppends } from "./encryption.js";
import { forkBench } from "./fork.js";
import { gatewayThroughput } from "./gateway.js";
import { gatewayMemory } from "./gateway-memory.js";
import { jsonlConcurrentAppends, jsonlLoad, jsonlSequentialAppends } from "./jsonl.js";
import { jsonlSearchBench } from "./jsonl-search.js";
import { packInstall } from "./pack-install.js";
import { postgresBench } from "./postgres.js";
import { postgresSearchBench } from "./postgres-search.js";
import { redactionCost } from "./redaction.js";
import { detectorCost } from "./redaction-shapes.js";
import type { Bench, BenchContext, Check, Row } from "./report.js";
import { renderTable } from "./report.js";
import { searchBench } from "./search.js";
import { searchStall } from "./search-stall.js";
import { startup } from "./startup.js";
import { summarizerThroughput } from "./summarizer.js";
import { diskOf, log, makeTempDir, removeDir } from "./support.js";
import { turnCpuBench } from "./turn-cpu.js";

interface Options {
  json: boolean;
  quick: boolean;
  /** Keys of the benchmarks to run; all when empty. */
  only: string[];
}

function parseArgs(argv: readonly string[]): Options {
  const options: Options = { json: false, quick: false, only: [] };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--json") options.json = true;
    else if (arg === "--only") options.only.push(...(argv[++i] ?? "").split(",").filter(Boolean));
    else if (arg === "--quick") options.quick = true;
    else if (arg === "--help" || arg === "-h") {
      const keys = BENCHES.map((b) => b.key).join(", ");
      process.stdout.write(`usage: npm run bench -- [--quick] [--json] [--only <keys>]\nkeys: ${keys}\n`);
      process.exit(0);
    } else throw new Error(`unknown argument ${arg}`);
  }
  return options;
}

interface Planned {
  /** The benchmark's key in the `--json` output. */
  key: string;
  name: string;
  run(ctx: BenchContext): Promise<unknown>;
  rows(result: unknown): Row[];
}

function plan<R>(key: string, bench: Bench<R>): Planned {
  return { key, name: bench.name, run: (ctx) => bench.run(ctx), rows: (result) => bench.rows(result as R) };
}

/** Add new benchmarks here. */
const BENCHES: readonly Planned[] = [
  plan("concurrent", concurrentAppends),
  plan("sequential", sequentialAppends),
  plan("jsonlConcurrent", jsonlConcurrentAppends),
  plan("jsonlSequential", jsonlSequentialAppends),
  plan("jsonlLoad", jsonlLoad),
  plan("context", contextLoad),
  plan("assembly", contextAssembly),
  plan("redaction", redactionCost),
  plan("detector", detectorCost),
  plan("summarizer", summarizerThroughput),
  plan("gateway", gatewayThroughput),
  plan("turnCpu", turnCpuBench),
  plan("memory", gatewayMemory),
  plan("dashboard", dashboardReads),
  plan("fork", forkBench),
  plan("sealed", sealedAppends),
  plan("search", searchBench),
  plan("searchStall", searchStall),
  plan("jsonlSearch", jsonlSearchBench),
  plan("postgres", postgresBench),
  plan("postgresSearch", postgresSearchBench),
  plan("startup", startup),
  plan("pack", packInstall),
];

/** The argument a bench's own process is started with: `--bench-process <key> <dir> full|quick`. */
const BENCH_PROCESS = "--bench-process";

/**
 * Runs a bench in a process of its own, so that what one bench leaves behind (compiled code tuned to
 * another store, a grown heap, threads) does not weigh on the next: after the SQLite benches in the same
 * process, the JSONL append ratio read 0.57-0.73x instead of 0.70-0.81x. The disk's dirty pages are
 * written out first (`sync`), so that one bench's writeback does not run into the next either.
 */
function inOwnProcess(bench: Planned, ctx: BenchContext): Promise<unknown> {
  spawnSync("sync");
  return new Promise((resolve, reject) => {
    const child = fork(
      fileURLToPath(import.meta.url),
      [BENCH_PROCESS, bench.key, ctx.dir, ctx.quick ? "quick" : "full"],
      { serialization: "advanced", stdio: ["ignore", "inherit", "inherit", "ipc"] },
    );
    let answer: { result: unknown } | undefined;
    child.once("message", (message) => {
      answer = message as { result: unknown };
    });
    child.once("error", reject);
    child.once("exit", (code) =>
      answer
        ? resolve(answer.result)
        : reject(new Error(`bench ${bench.key} ended (exit ${code}) without a result`)),
    );
  });
}

/** In a bench's own process: runs it and sends the result to the parent. */
async function benchProcess(key: string, dir: string, mode: string): Promise<void> {
  const bench = BENCHES.find((b) => b.key === key);
  if (!bench) throw new Error(`unknown benchmark ${key}`);
  const result = await bench.run({ dir, quick: mode === "quick", log });
  // Some benches leave unref'd threads and timers behind: the process ends once the result is sent.
  process.send?.({ result }, () => process.exit(0));
}

async function main(): Promise<void> {
  const options = parseArgs(process.argv.slice(2));
  const dir = makeTempDir("run");
  const cleanup = () => removeDir(dir);
  const interrupted = () => {
    cleanup();
    process.exit(130);
  };
  process.once("SIGINT", interrupted);
  process.once("SIGTERM", interrupted);

  const started = performance.now();
  const machine = {
    cpus: cpus().length,
    cpu: cpus()[0]?.model ?? "unknown",
    memoryGb: Math.round(totalmem() / 1024 ** 3),
    node: process.version,
    disk: diskOf(dir),
  };
  const ctx: BenchContext = { dir, quick: options.quick, log };
  log(`${options.quick ? "quick" : "full"} run in ${dir} on ${machine.disk}`);

  const results: Record<string, unknown> = {};
  const sections: Array<{ name: string; rows: Row[] }> = [];
  try {
    const unknown = options.only.filter((key) => !BENCHES.some((b) => b.key === key));
    if (unknown.length > 0) throw new Error(`unknown benchmark ${unknown.join(", ")}`);
    const chosen = options.only.length > 0 ? BENCHES.filter((b) => options.only.includes(b.key)) : BENCHES;
    for (const bench of chosen) {
      log(`${bench.name}...`);
      const result = await inOwnProcess(bench, ctx);
      results[bench.key] = result;
      sections.push({ name: bench.name, rows: bench.rows(result) });
    }
  } finally {
    cleanup();
  }
  const durationSec = (performance.now() - started) / 1000;

  const checks: Array<Check & { figure: string }> = sections.flatMap((s) =>
    s.rows.flatMap((row) => row.checks.map((check) => ({ figure: `${s.name}: ${row.figure}`, ...check }))),
  );
  if (options.json) {
    const output = { mode: options.quick ? "quick" : "full", machine, durationSec, results, checks };
    process.stdout.write(`${JSON.stringify(output, null, 2)}\n`);
    return;
  }
  const passed = checks.filter((c) => c.pass).length;
  process.stdout.write(
    [
      `sessiond bench (${options.quick ? "quick" : "full"}): ${machine.cpus} x ${machine.cpu}, ${machine.memoryGb} GB, ` +
        `Node ${machine.node}, disk ${machine.disk}`,
      "",
      renderTable(sections),
      "",
      `${passed}/${checks.length} targets met (informational) in ${durationSec.toFixed(0)} s`,
      "",
    ].join("\n"),
  );
}

if (process.argv[2] === BENCH_PROCESS)
  await benchProcess(process.argv[3] ?? "", process.argv[4] ?? "", process.argv[5] ?? "");
else await main();
