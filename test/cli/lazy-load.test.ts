import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "sessiond-lazy-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// A loader hook that prints every ES module the process loads.
writeFileSync(
  join(dir, "hooks.mjs"),
  'export async function load(url, context, next) { process._rawDebug("LOAD " + url); return next(url, context); }',
);
writeFileSync(
  join(dir, "register.mjs"),
  `import { register } from "node:module"; register(${JSON.stringify(pathToFileURL(join(dir, "hooks.mjs")).href)});`,
);

/** The modules of this package and of node_modules that `node <args>` loads, relative to the repo. */
async function loaded(args: string[]): Promise<string[]> {
  const { stderr } = await promisify(execFile)(
    process.execPath,
    ["--import", pathToFileURL(join(dir, "register.mjs")).href, ...args],
    { cwd: dir },
  );
  return stderr
    .split("\n")
    .filter((line) => line.startsWith("LOAD file://"))
    .map((line) => fileURLToPath(line.slice(5)).slice(ROOT.length));
}

describe("start-up loads what the command needs", () => {
  it("route loads no engine, store backend or gateway", async () => {
    const modules = await loaded([
      join(ROOT, "dist/src/cli/main.js"),
      "route",
      "--channel",
      "telegram",
      "--sender",
      "1",
    ]);
    expect(modules).toContain("dist/src/keys/route.js");
    for (const part of [
      "dist/src/engine.js",
      "dist/src/store/open.js",
      "dist/src/store/sqlite/",
      "node_modules/better-sqlite3/",
      "dist/src/gateway/server.js",
      "node_modules/hono/",
      "node_modules/yaml/",
      "node_modules/zod/",
    ]) {
      expect(modules.filter((m) => m.startsWith(part))).toEqual([]);
    }
  });

  it("sessions list without a config file loads neither zod, Temporal nor hono", async () => {
    const cli = join(ROOT, "dist/src/cli/main.js");
    const modules = await loaded([cli, "--data-dir", join(dir, "data"), "sessions", "list"]);
    expect(modules).toContain("dist/src/engine.js");
    for (const part of ["node_modules/zod/", "node_modules/temporal-polyfill/", "node_modules/hono/"]) {
      expect(modules.filter((m) => m.startsWith(part))).toEqual([]);
    }
  });

  it("import of the root loads no optional package, gateway, yaml, zod or Temporal", async () => {
    const index = pathToFileURL(join(ROOT, "dist/src/index.js")).href;
    const modules = await loaded(["--input-type=module", "-e", `await import(${JSON.stringify(index)})`]);
    expect(modules).toContain("dist/src/engine.js");
    for (const part of [
      "node_modules/openai/",
      "node_modules/@anthropic-ai/",
      "node_modules/@openai/",
      "node_modules/@a2a-js/",
      "node_modules/gpt-tokenizer/",
      "node_modules/hono/",
      "node_modules/yaml/",
      "node_modules/temporal-polyfill/",
      "node_modules/zod/",
    ]) {
      expect(modules.filter((m) => m.startsWith(part))).toEqual([]);
    }
  });
});
