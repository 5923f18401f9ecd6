/**
 * Start-up: the real commands spawned from the build, each beside a bare `node -e 0` in the same rounds
 * (commands interleaved, so a busy moment of the machine falls on all of them alike). Wall time is from
 * spawn to exit (to the "listening" line for `serve`); CPU is user + system of the whole process to exit
 * (none for `serve`, stopped by a signal).
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { createEngine } from "../src/engine.js";
import type { Bench, BenchContext, Row } from "./report.js";
import { below, int, ratioText } from "./report.js";
import { nowMs, percentile } from "./support.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
// What users run: the package's bin and root export (the bundle in dist/bundle).
const MANIFEST = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
  bin: { sessiond: string };
  exports: { ".": { import: string } };
};
const CLI = join(ROOT, MANIFEST.bin.sessiond);
const INDEX = pathToFileURL(join(ROOT, MANIFEST.exports["."].import)).href;
const SESSIONS = 200;

interface Command {
  key: string;
  label: string;
  args: (dataDir: string) => string[];
  /** Ready when stdout shows this; then the process is stopped with SIGTERM. */
  readyLine?: string;
  /** Target, ms: over bare node (`overBare`) or in all. */
  targetMs: number;
  overBare: boolean;
}

const COMMANDS: readonly Command[] = [
  { key: "bare", label: "node -e 0", args: () => ["-e", "0"], targetMs: Number.NaN, overBare: false },
  {
    key: "import",
    label: 'import "sessiond"',
    args: () => ["--input-type=module", "-e", `await import(${JSON.stringify(INDEX)})`],
    targetMs: 150,
    overBare: true,
  },
  {
    key: "route",
    label: "sessiond route --channel telegram --sender 42",
    args: () => [CLI, "route", "--channel", "telegram", "--sender", "42"],
    targetMs: 250,
    overBare: false,
  },
  {
    key: "list",
    label: `sessiond sessions list (${SESSIONS} sessions)`,
    args: (dataDir) => [CLI, "--data-dir", dataDir, "sessions", "list"],
    targetMs: 250,
    overBare: false,
  },
  {
    key: "serve",
    label: "sessiond serve, to ready",
    args: (dataDir) => [CLI, "--data-dir", dataDir, "serve", "--port", "0"],
    readyLine: "sessiond gateway listening on",
    targetMs: 500,
    overBare: false,
  },
];

export interface StartupFigure {
  /** Medians over the runs, ms. */
  wallMs: number;
  cpuMs: number;
}

export interface StartupResult {
  runs: number;
  figures: Record<string, StartupFigure>;
}

/** Writes the process's CPU time at exit to $SESSIOND_BENCH_CPU (a preload, so nothing else changes). */
const CPU_PRELOAD = `process.on("exit", () => {
  const { user, system } = process.cpuUsage();
  require("node:fs").writeFileSync(process.env.SESSIOND_BENCH_CPU, String((user + system) / 1000));
});`;

function runOnce(
  command: Command,
  dataDir: string,
  preload: string,
  cpuFile: string,
): Promise<{ wallMs: number; cpuMs: number }> {
  rmSync(cpuFile, { force: true });
  const started = nowMs();
  const child = spawn(process.execPath, ["--require", preload, ...command.args(dataDir)], {
    cwd: dataDir,
    env: { ...process.env, SESSIOND_BENCH_CPU: cpuFile, SESSIOND_TOKEN: "bench-token" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  return new Promise((resolve, reject) => {
    let wallMs = Number.NaN;
    let out = "";
    let err = "";
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      err += chunk;
    });
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk;
      if (command.readyLine && Number.isNaN(wallMs) && out.includes(command.readyLine)) {
        wallMs = nowMs() - started;
        child.kill("SIGTERM");
      }
    });
    child.once("error", reject);
    child.once("close", (code) => {
      const ready = command.readyLine !== undefined && !Number.isNaN(wallMs);
      if (Number.isNaN(wallMs)) wallMs = nowMs() - started;
      // A gateway stopped at once may die of the signal before its handler is set: it was ready, that counts.
      if (code !== 0 && !ready) {
        reject(new Error(`${command.label} exited ${code}: ${err.slice(0, 500)}`));
        return;
      }
      resolve({ wallMs, cpuMs: existsSync(cpuFile) ? Number(readFileSync(cpuFile, "utf8")) : Number.NaN });
    });
  });
}

async function seed(dataDir: string): Promise<void> {
  const engine = await createEngine({ dataDir });
  for (let i = 0; i < SESSIONS; i++) {
    await engine.turnWith(
      {
        channel: "telegram",
        chat: { type: "direct", id: String(i) },
        sender: { id: String(i) },
        text: `hello ${i}`,
        platformMessageId: `m-${i}`,
      },
      async () => "hi",
    );
  }
  await engine.close();
}

export const startup: Bench<StartupResult> = {
  name: "start-up (spawned from the build; SQLite data dir already there; medians)",
  async run(ctx: BenchContext): Promise<StartupResult> {
    const dataDir = join(ctx.dir, "startup");
    await seed(dataDir);
    const preload = join(ctx.dir, "cpu-at-exit.cjs");
    writeFileSync(preload, CPU_PRELOAD);
    const cpuFile = join(ctx.dir, "cpu-ms");
    const runs = ctx.quick ? 3 : 9;
    const samples = new Map<string, { wall: number[]; cpu: number[] }>();
    // One round unmeasured: the file cache and the generated token are then as on any later start.
    for (const command of COMMANDS) await runOnce(command, dataDir, preload, cpuFile);
    for (let round = 0; round < runs; round++) {
      for (const command of COMMANDS) {
        const { wallMs, cpuMs } = await runOnce(command, dataDir, preload, cpuFile);
        const sample = samples.get(command.key) ?? { wall: [], cpu: [] };
        sample.wall.push(wallMs);
        sample.cpu.push(cpuMs);
        samples.set(command.key, sample);
      }
    }
    const median = (values: number[]) =>
      percentile(
        [...values].sort((a, b) => a - b),
        50,
      );
    const figures: Record<string, StartupFigure> = {};
    for (const [key, sample] of samples)
      figures[key] = { wallMs: median(sample.wall), cpuMs: median(sample.cpu) };
    return { runs, figures };
  },
  rows(result: StartupResult): Row[] {
    const bare = result.figures.bare ?? { wallMs: Number.NaN, cpuMs: Number.NaN };
    return COMMANDS.map((command) => {
      const figure = result.figures[command.key] ?? { wallMs: Number.NaN, cpuMs: Number.NaN };
      const isBare = command.key === "bare";
      const over = figure.wallMs - bare.wallMs;
      const notes = [
        ...(Number.isNaN(figure.cpuMs) ? [] : [`CPU ${int(figure.cpuMs)} ms`]),
        ...(isBare ? [] : [`+${int(over)} over bare`]),
      ];
      return {
        figure: `${command.label}, ms (${notes.join(", ")})`,
        value: int(figure.wallMs),
        baseline: isBare ? "" : int(bare.wallMs),
        ratio: isBare ? "" : ratioText(figure.wallMs / bare.wallMs),
        checks: isBare
          ? []
          : [
              command.overBare
                ? below(over, command.targetMs, `${command.targetMs} ms over bare`)
                : below(figure.wallMs, command.targetMs, `${command.targetMs} ms`),
            ],
      };
    });
  },
};
