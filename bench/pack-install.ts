/**
 * The package as a user gets it: `npm pack`, the tarball installed into an empty project outside this
 * repository (so nothing resolves from its node_modules), the size of what that installs, and a turn on
 * SQLite through `createEngine` there, then `sessiond sessions list` through the installed bin.
 * `node dist/bench/pack-install.js` runs it alone (for CI) and exits 1 when something fails or misses.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import type { Bench, Row } from "./report.js";
import { below, fixed, ratioText, renderTable, verdict } from "./report.js";
import { log, nowMs } from "./support.js";

export interface PackResult {
  tarballMb: number;
  installSec: number;
  /** What `npm install <tarball>` put in the empty project's node_modules. */
  installedMb: number;
  /** This repository's own (dev) node_modules, for scale. */
  devInstallMb: number;
  /** Optional peer packages that the install brought anyway (should be none). */
  optionalInstalled: string[];
  /** The turn's reply and the entries stored, as the installed package reported them. */
  reply: string;
  storedEntries: number;
  /** The native addons the turn loaded, relative to the project's node_modules. */
  addons: string[];
  /** Sessions `sessiond sessions list --json` of the installed bin listed afterwards. */
  listedSessions: number;
  /** Entry points in the manifest's `exports`, and those that failed to import in the installed project. */
  entryPoints: string[];
  failedEntryPoints: string[];
}

const MAX_INSTALLED_MB = 80;
/** Entry points that import an optional peer outright (not installed here): each must fail naming it. */
const ENTRY_PEERS: Record<string, string> = { "sessiond/store/testing": "vitest" };
const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** Runs in the installed project: a turn on SQLite, then what was stored. */
const TURN_SCRIPT = `
import { createRequire } from "node:module";
import { createEngine } from "sessiond";
const engine = await createEngine({ dataDir: "./data" });
const result = await engine.turnWith(
  { channel: "telegram", chat: { type: "direct", id: "42" }, sender: { id: "42" }, text: "hello", platformMessageId: "tg-1" },
  async (context) => "you said: " + context.input.content,
);
const history = await engine.history(result.key);
await engine.close();
const addons = Object.keys(createRequire(import.meta.url).cache).filter((file) => file.endsWith(".node"));
console.log(JSON.stringify({ reply: result.reply.content, entries: history.length, addons }));
`;

/** Imports each entry point by its package name; prints those that fail or export nothing. */
const ENTRY_SCRIPT = `
const failed = [];
for (const name of JSON.parse(process.argv[2])) {
  try { if (Object.keys(await import(name)).length === 0) failed.push(name); }
  catch (error) { failed.push(name + ": " + error.message); }
}
console.log(JSON.stringify(failed));
`;

function duMb(path: string): number {
  return Number(execFileSync("du", ["-sk", path], { encoding: "utf8" }).split("\t")[0]) / 1024;
}

/** npm and the installed bin (`#!/usr/bin/env node`) run on this process's Node, not the first on PATH. */
const PATH = `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ""}`;

function run(cmd: string, args: string[], cwd: string): string {
  return execFileSync(cmd, args, {
    cwd,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
    env: { ...process.env, PATH },
  });
}

export async function packAndInstall(): Promise<PackResult> {
  const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
    name: string;
    peerDependencies?: Record<string, string>;
    exports: Record<string, unknown>;
  };
  const entryPoints = Object.keys(manifest.exports)
    .filter((path) => path !== "./package.json")
    .map((path) => (path === "." ? manifest.name : `${manifest.name}/${path.slice(2)}`));
  if (!existsSync(join(ROOT, "dist", "src", "index.js")) || !existsSync(join(ROOT, "dist", "web"))) {
    throw new Error("no build to pack: run npm run build first");
  }
  const dir = mkdtempSync(join(tmpdir(), "sessiond-pack-"));
  try {
    log(`npm pack into ${dir}`);
    const packed = JSON.parse(run("npm", ["pack", "--json", "--pack-destination", dir], ROOT)) as Array<{
      filename: string;
    }>;
    const tarball = join(dir, packed[0]?.filename ?? "");
    const project = join(dir, "project");
    execFileSync("mkdir", [project]);
    writeFileSync(
      join(project, "package.json"),
      JSON.stringify({ name: "pack-check", private: true, type: "module" }),
    );
    log("npm install <tarball>");
    const started = nowMs();
    run("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error", tarball], project);
    const installSec = (nowMs() - started) / 1000;
    const modules = join(project, "node_modules");
    const optionalInstalled = Object.keys(manifest.peerDependencies ?? {}).filter((name) =>
      existsSync(join(modules, name)),
    );
    writeFileSync(join(project, "turn.mjs"), TURN_SCRIPT);
    const turn = JSON.parse(run(process.execPath, ["turn.mjs"], project)) as {
      reply: string;
      entries: number;
      addons: string[];
    };
    writeFileSync(join(project, "entries.mjs"), ENTRY_SCRIPT);
    const failures = JSON.parse(
      run(process.execPath, ["entries.mjs", JSON.stringify(entryPoints)], project),
    ) as string[];
    const needsPeer = (failure: string, name: string, peer: string) =>
      failure.startsWith(`${name}: `) && failure.includes(`Cannot find package '${peer}'`);
    const failedEntryPoints = failures.filter(
      (failure) => !Object.entries(ENTRY_PEERS).some(([name, peer]) => needsPeer(failure, name, peer)),
    );
    // One that loads without its peer has it bundled inside: a second copy beside the one the user runs.
    for (const [name, peer] of Object.entries(ENTRY_PEERS))
      if (entryPoints.includes(name) && !failures.some((failure) => needsPeer(failure, name, peer)))
        failedEntryPoints.push(`${name}: loaded without ${peer}`);
    const listed = JSON.parse(
      run(join(modules, ".bin", "sessiond"), ["--data-dir", "data", "sessions", "list", "--json"], project),
    ) as { sessions: unknown[] };
    return {
      tarballMb: duMb(tarball),
      installSec,
      installedMb: duMb(modules),
      devInstallMb: duMb(join(ROOT, "node_modules")),
      optionalInstalled,
      reply: turn.reply,
      storedEntries: turn.entries,
      addons: turn.addons.map((file) => relative(modules, file)),
      listedSessions: listed.sessions.length,
      entryPoints,
      failedEntryPoints,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const packInstall: Bench<PackResult> = {
  name: "package install (npm pack, installed into an empty project)",
  run: () => packAndInstall(),
  rows(r: PackResult): Row[] {
    const turned = r.reply === "you said: hello" && r.storedEntries === 2 && r.listedSessions === 1;
    return [
      {
        figure: "installed node_modules, MB (baseline: this repo's dev install)",
        value: fixed(r.installedMb, 1),
        baseline: fixed(r.devInstallMb, 0),
        ratio: ratioText(r.installedMb / r.devInstallMb),
        checks: [below(r.installedMb, MAX_INSTALLED_MB, `${MAX_INSTALLED_MB} MB`)],
      },
      {
        figure: `optional peer packages installed${r.optionalInstalled.length ? `: ${r.optionalInstalled.join(", ")}` : ""}`,
        value: String(r.optionalInstalled.length),
        baseline: "",
        ratio: "",
        checks: [{ target: "none", pass: r.optionalInstalled.length === 0 }],
      },
      {
        figure: "createEngine + a SQLite turn there, then sessions list (installed bin)",
        value: turned
          ? "ok"
          : `reply ${JSON.stringify(r.reply)}, ${r.storedEntries} entries, ${r.listedSessions} listed`,
        baseline: "",
        ratio: "",
        checks: [{ target: "works", pass: turned }],
      },
      {
        // better-sqlite3 13 ships N-API builds for Linux, macOS and Windows (x64, arm64) in its tarball, so a
        // user's install compiles nothing and needs no compiler.
        figure: "native addons the turn loaded (better-sqlite3's bundled prebuild)",
        value: r.addons.join(", ") || "none",
        baseline: "",
        ratio: "",
        checks: [
          {
            target: "prebuild",
            pass: r.addons.length === 1 && /^better-sqlite3\/prebuilds\/[^/]+\.node$/.test(r.addons[0] ?? ""),
          },
        ],
      },
      {
        figure: `entry points imported by name (${r.entryPoints.length})${r.failedEntryPoints.length ? `; failed: ${r.failedEntryPoints.join("; ")}` : ""}`,
        value: String(r.entryPoints.length - r.failedEntryPoints.length),
        baseline: "",
        ratio: "",
        checks: [{ target: "all", pass: r.failedEntryPoints.length === 0 && r.entryPoints.length > 1 }],
      },
      {
        figure: "tarball MB; npm install s",
        value: `${fixed(r.tarballMb, 1)}; ${fixed(r.installSec, 0)}`,
        baseline: "",
        ratio: "",
        checks: [],
      },
    ];
  },
};

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const rows = packInstall.rows(await packAndInstall());
  process.stdout.write(`${renderTable([{ name: packInstall.name, rows }])}\n`);
  const failed = rows.filter((row) => verdict(row.checks) === "MISS");
  if (failed.length > 0) {
    process.stderr.write(`pack check failed: ${failed.map((row) => row.figure).join("; ")}\n`);
    process.exit(1);
  }
}
