import { fork } from "node:child_process";
import { join } from "node:path";
import { buildStore } from "./bulk-build.js";
import type { ProbeResult } from "./context-probe.js";
import type { Bench, BenchContext, Row } from "./report.js";
import { below, fixed, int, ratioText } from "./report.js";
import { databaseBytes } from "./support.js";

export interface ContextLoadResult extends ProbeResult {
  sessions: number;
  entries: number;
  buildSec: number;
  fileBytes: number;
  bytesPerEntry: number;
}

const PER_SESSION = 100;

/** Runs context-probe.js in a fresh process and returns what it sends back. */
function runProbe(path: string, sessions: number, samples: number, warmup: number): Promise<ProbeResult> {
  return new Promise((resolve, reject) => {
    const child = fork(
      new URL("./context-probe.js", import.meta.url),
      [path, String(sessions), String(samples), String(warmup)],
      // The child's stdout goes to our stderr: stdout is kept for --json.
      { stdio: ["ignore", 2, 2, "ipc"] },
    );
    let result: ProbeResult | undefined;
    child.on("message", (message) => {
      result = message as ProbeResult;
    });
    child.on("error", reject);
    child.on("exit", (code) => {
      if (code === 0 && result) resolve(result);
      else reject(new Error(`context probe exited with code ${code}`));
    });
  });
}

async function run(ctx: BenchContext): Promise<ContextLoadResult> {
  const sessions = ctx.quick ? 1_000 : 10_000;
  const path = join(ctx.dir, "context.db");
  ctx.log(`context: building ${int(sessions * PER_SESSION)} entries in ${int(sessions)} sessions`);
  const built = await buildStore(path, sessions, PER_SESSION);
  const fileBytes = databaseBytes(path);
  ctx.log(`context: built in ${fixed(built.buildMs / 1000, 1)} s, ${fixed(fileBytes / 1024 / 1024, 1)} MB`);
  const probe = await runProbe(path, sessions, 2_000, 500);
  return {
    ...probe,
    sessions,
    entries: built.entries,
    buildSec: built.buildMs / 1000,
    fileBytes,
    bytesPerEntry: fileBytes / built.entries,
  };
}

export const contextLoad: Bench<ContextLoadResult> = {
  name: "context load (loadContext of a random key, 100 messages each)",
  run,
  rows(r): Row[] {
    const mb = (n: number) => fixed(n, 1);
    return [
      {
        figure: `store size (${int(r.entries)} entries / ${int(r.sessions)} sessions)`,
        value: `${mb(r.fileBytes / 1024 / 1024)} MB`,
        baseline: "",
        ratio: `${int(r.bytesPerEntry)} B/entry`,
        checks: [],
      },
      {
        figure: "loadContext p50 (ms) (baseline: raw SELECT)",
        value: fixed(r.p50Ms, 3),
        baseline: fixed(r.baselineP50Ms, 3),
        ratio: ratioText(r.p50Ms / r.baselineP50Ms),
        checks: [below(r.p50Ms, 0.3, "0.3 ms")],
      },
      {
        figure: "loadContext p99 (ms)",
        value: fixed(r.p99Ms, 3),
        baseline: fixed(r.baselineP99Ms, 3),
        ratio: ratioText(r.p99Ms / r.baselineP99Ms),
        checks: [],
      },
      {
        figure: "peak RSS (MB): maxRSS / sampled",
        value: `${mb(r.maxRssMb)} / ${mb(r.peakRssSampledMb)}`,
        baseline: `${mb(r.startRssMb)} idle`,
        ratio: "",
        checks: [below(Math.max(r.maxRssMb, r.peakRssSampledMb), 300, "300 MB")],
      },
    ];
  },
};
