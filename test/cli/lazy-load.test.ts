import { execFile, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { createEngine } from "../../src/engine.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "sessiond-lazy-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// A loader hook that prints every ES module the process loads, and at exit every file in require's cache:
// CommonJS packages and the ES modules loaded by `require` (src/model/load-sync.ts), which the hook never sees.
writeFileSync(
  join(dir, "hooks.mjs"),
  'export async function load(url, context, next) { process._rawDebug("LOAD " + url); return next(url, context); }',
);
writeFileSync(
  join(dir, "register.mjs"),
  [
    'import { createRequire, register } from "node:module";',
    'import { pathToFileURL } from "node:url";',
    `register(${JSON.stringify(pathToFileURL(join(dir, "hooks.mjs")).href)});`,
    "const cache = createRequire(import.meta.url).cache;",
    'process.on("exit", () => { for (const file of Object.keys(cache)) process._rawDebug("LOAD " + pathToFileURL(file).href); });',
  ].join("\n"),
);

// What users run: the package's bin and root export, the bundle in dist/bundle (scripts/bundle.mjs).
const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
  bin: { sessiond: string };
  exports: { ".": { import: string } };
};
const CLI = join(ROOT, manifest.bin.sessiond);
const INDEX = pathToFileURL(join(ROOT, manifest.exports["."].import)).href;

/** esbuild's metafile: the dist/src modules each bundle chunk holds. */
const chunks = (
  JSON.parse(readFileSync(join(ROOT, "dist/bundle/meta.json"), "utf8")) as {
    outputs: Record<string, { inputs: Record<string, { bytesInOutput: number }> }>;
  }
).outputs;

/** A loaded file as the modules it holds: a bundle chunk's dist/src modules, else the file itself. */
function modulesOf(file: string): string[] {
  const chunk = chunks[file];
  if (chunk === undefined) return [file];
  return Object.entries(chunk.inputs)
    .filter(([, input]) => input.bytesInOutput > 0)
    .map(([input]) => input);
}

/** The files of this package and of node_modules that `node <args>` loads, relative to the repo. */
async function loadedFiles(args: string[]): Promise<string[]> {
  const { stderr } = await promisify(execFile)(
    process.execPath,
    ["--import", pathToFileURL(join(dir, "register.mjs")).href, ...args],
    { cwd: dir },
  );
  return filesIn(stderr);
}

/** The files named by the LOAD lines of `stderr`, relative to the repo, each once. */
function filesIn(stderr: string): string[] {
  return stderr
    .split("\n")
    .filter((line) => line.startsWith("LOAD file://"))
    .map((line) => fileURLToPath(line.slice(5)).slice(ROOT.length))
    .filter((file, i, files) => files.indexOf(file) === i);
}

// For serve: what the process writes to stdout, echoed in order among the LOAD lines on stderr.
writeFileSync(
  join(dir, "echo-stdout.cjs"),
  [
    "const write = process.stdout.write.bind(process.stdout);",
    'process.stdout.write = (chunk, ...rest) => { process._rawDebug("STDOUT " + String(chunk).trimEnd()); return write(chunk, ...rest); };',
  ].join("\n"),
);

/** The files `node <args>` loads before it writes `readyLine` to stdout; then it is stopped. */
async function filesBeforeReady(args: string[], readyLine: string): Promise<string[]> {
  const child = spawn(
    process.execPath,
    [
      "--require",
      join(dir, "echo-stdout.cjs"),
      "--import",
      pathToFileURL(join(dir, "register.mjs")).href,
      ...args,
    ],
    {
      cwd: dir,
      env: { ...process.env, SESSIOND_TOKEN: "lazy-load-token" },
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
  let err = "";
  const exited = new Promise<void>((resolve) => child.once("close", () => resolve()));
  const ready = new Promise<string>((resolve, reject) => {
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      err += chunk;
      const at = err.indexOf(`STDOUT ${readyLine}`);
      if (at >= 0) resolve(err.slice(0, at));
    });
    child.once("close", (code) => reject(new Error(`exited ${code} before ready: ${err.slice(-2000)}`)));
  });
  try {
    return filesIn(await ready);
  } finally {
    child.kill("SIGTERM");
    await exited;
  }
}

/** None of `loaded` (files or modules) starts with any of `parts`. */
function expectNoneOf(loaded: string[], parts: string[]): void {
  expect(loaded.filter((name) => parts.some((part) => name.startsWith(part)))).toEqual([]);
}

/** The modules (dist/src files inside the chunks, and node_modules files) that `node <args>` loads. */
async function loaded(args: string[]): Promise<string[]> {
  return (await loadedFiles(args)).flatMap(modulesOf);
}

describe("start-up loads what the command needs", () => {
  it("route loads no engine, store backend or gateway", async () => {
    const modules = await loaded([CLI, "route", "--channel", "telegram", "--sender", "1"]);
    expect(modules).toContain("dist/src/keys/route.js");
    expectNoneOf(modules, [
      "dist/src/engine.js",
      "dist/src/store/open.js",
      "dist/src/store/sqlite/",
      "node_modules/better-sqlite3/",
      "dist/src/gateway/server.js",
      "node_modules/hono/",
      "node_modules/yaml/",
      "node_modules/zod/",
      // The other commands' modules: each command imports its own.
      "dist/src/cli/commands/sessions",
      "dist/src/cli/commands/serve.js",
      "dist/src/cli/commands/import.js",
      "dist/src/export/",
      "dist/src/search/",
    ]);
  });

  it("sessions list loads no other command's modules", async () => {
    const modules = await loaded([CLI, "--data-dir", join(dir, "data"), "sessions", "list"]);
    expect(modules).toContain("dist/src/cli/commands/sessions-list.js");
    expectNoneOf(modules, [
      "dist/src/cli/commands/route.js",
      "dist/src/cli/commands/serve.js",
      "dist/src/cli/commands/import.js",
      "dist/src/cli/commands/sessions-export.js",
      "dist/src/cli/commands/sessions-show.js",
      "dist/src/export/",
    ]);
  });

  it("the bin carries its pure-JS packages: route reads no file of node_modules, serve none of hono, ws or commander", async () => {
    const route = await loadedFiles([CLI, "route", "--channel", "telegram", "--sender", "1"]);
    expect(route.filter((file) => file.startsWith("node_modules/"))).toEqual([]);
    expect(route.flatMap(modulesOf)).toContain("node_modules/commander/lib/command.js");
    const dataDir = join(dir, "serve-files-data");
    const engine = await createEngine({ dataDir });
    await engine.close();
    const serve = await filesBeforeReady(
      [CLI, "--data-dir", dataDir, "serve", "--port", "0"],
      "sessiond gateway listening on",
    );
    expectNoneOf(serve, [
      "node_modules/hono/",
      "node_modules/@hono/",
      "node_modules/ws/",
      "node_modules/commander/",
    ]);
    expect(serve.flatMap(modulesOf).some((m) => m.startsWith("node_modules/hono/"))).toBe(true);
  });

  it("sessions list without a config file loads neither zod, Temporal nor hono", async () => {
    const modules = await loaded([CLI, "--data-dir", join(dir, "data"), "sessions", "list"]);
    expect(modules).toContain("dist/src/engine.js");
    expectNoneOf(modules, ["node_modules/zod/", "node_modules/temporal-polyfill/", "node_modules/hono/"]);
  });

  it("import of the root loads no optional package, gateway, yaml, zod, Temporal or better-sqlite3", async () => {
    const modules = await loaded(["--input-type=module", "-e", `await import(${JSON.stringify(INDEX)})`]);
    expect(modules).toContain("dist/src/engine.js");
    expectNoneOf(modules, [
      "node_modules/better-sqlite3/",
      "node_modules/openai/",
      "node_modules/@anthropic-ai/",
      "node_modules/@openai/",
      "node_modules/@a2a-js/",
      "node_modules/gpt-tokenizer/",
      "node_modules/hono/",
      "node_modules/yaml/",
      "node_modules/temporal-polyfill/",
      "node_modules/zod/",
    ]);
  });

  it("sessions list on a SQLite data dir loads no other backend and not the secret scanner's rules", async () => {
    const dataDir = join(dir, "sqlite-data");
    const engine = await createEngine({ dataDir });
    await engine.turnWith(
      { channel: "telegram", chat: { type: "direct", id: "1" }, sender: { id: "1" }, text: "hello" },
      async () => "hi",
    );
    await engine.close();
    const modules = await loaded([CLI, "--data-dir", dataDir, "sessions", "list"]);
    expect(modules).toContain("dist/src/store/sqlite/sqlite-store.js");
    expect(modules).toContain("node_modules/better-sqlite3/lib/index.js");
    expectNoneOf(modules, [
      "dist/src/store/jsonl/jsonl-store.js",
      "dist/src/store/postgres/",
      "node_modules/@secretlint/",
      "node_modules/zod/",
      "dist/src/gateway/app.js",
    ]);
  });

  it("the root export loads neither the JSONL backend nor the secret scanner's rules", async () => {
    const modules = await loaded(["--input-type=module", "-e", `await import(${JSON.stringify(INDEX)})`]);
    expectNoneOf(modules, ["dist/src/store/jsonl/jsonl-store.js", "node_modules/@secretlint/"]);
  });

  it("serve on an existing SQLite data dir loads no zod, OpenAPI generator, channel adapter, runtime SDK, prom-client or secret rules before ready", async () => {
    const dataDir = join(dir, "serve-data");
    const engine = await createEngine({ dataDir });
    await engine.close();
    const modules = (
      await filesBeforeReady(
        [CLI, "--data-dir", dataDir, "serve", "--port", "0"],
        "sessiond gateway listening on",
      )
    ).flatMap(modulesOf);
    expect(modules).toContain("dist/src/gateway/server.js");
    expect(modules).toContain("dist/src/store/sqlite/sqlite-store.js");
    expectNoneOf(modules, [
      "dist/src/channels/index.js",
      "dist/src/channels/telegram.js",
      "dist/src/channels/msteams.js",
      "node_modules/jose/",
      "node_modules/prom-client/",
      "node_modules/@opentelemetry/",
      "dist/src/gateway/metrics/registry.js",
      "node_modules/zod/",
      "node_modules/@hono/zod-openapi/",
      "node_modules/@asteasolutions/",
      "dist/src/gateway/routes/sessions.js",
      "dist/src/gateway/routes/openapi.js",
      "node_modules/openai/",
      "node_modules/@anthropic-ai/",
      "node_modules/@openai/",
      "node_modules/@a2a-js/",
      "node_modules/gpt-tokenizer/",
      "node_modules/@secretlint/",
      "dist/src/store/jsonl/jsonl-store.js",
      "dist/src/store/postgres/",
    ]);
  });

  it("the bin and the root export are bundles: a few dozen files, not one per source module", async () => {
    const ownFiles = (files: string[]) => files.filter((file) => file.startsWith("dist/"));
    const route = await loadedFiles([CLI, "route", "--channel", "telegram", "--sender", "1"]);
    const root = await loadedFiles(["--input-type=module", "-e", `await import(${JSON.stringify(INDEX)})`]);
    // Unbundled, route read 60 files of dist/src and the root export 148.
    expect(ownFiles(route).length).toBeLessThan(30);
    expect(ownFiles(root).length).toBeLessThan(45);
    expect(
      (await loaded(["--input-type=module", "-e", `await import(${JSON.stringify(INDEX)})`])).length,
    ).toBeGreaterThan(ownFiles(root).length);
  });

  it("the compaction worker's program sits beside every bundle chunk that starts it", () => {
    // compaction/thread.ts starts `./thread-program.js` beside itself, and runs the work in-thread without it.
    const starters = Object.keys(chunks).filter((file) =>
      modulesOf(file).includes("dist/src/compaction/thread.js"),
    );
    expect(starters.length).toBeGreaterThan(0);
    for (const file of starters)
      expect(existsSync(join(ROOT, dirname(file), "thread-program.js"))).toBe(true);
  });
});
