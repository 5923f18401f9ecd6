import { execFile } from "node:child_process";
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OPTIONAL_PACKAGES } from "../../src/model/optional-package.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const OPTIONAL = Object.keys(OPTIONAL_PACKAGES);
/** Optional peers of one entry point that imports them outright (a test suite's), not loaded on first use. */
const ENTRY_PEERS: Record<string, string> = { vitest: "sessiond/store/testing" };

/** Each optional package's first use, in a process whose node_modules lacks every optional package. */
const PROBE = `
import * as runtimes from "./dist/src/public/runtimes.js";
import { countTokens } from "./dist/src/public/context.js";
const sessiond = { ...runtimes, countTokens };
const run = {
  key: "k", agent: "a", messages: [{ role: "user", content: "hi" }], input: "hi",
  session: { id: "s", entryCount: 1, approxTokens: 1 }, signal: new AbortController().signal,
};
const uses = {
  openai: () => sessiond.modelRuntime({ provider: "openai", model: "m", baseUrl: "http://127.0.0.1:9/v1" }).run(run).next(),
  "@anthropic-ai/sdk": () => sessiond.createTextModel({ provider: "anthropic", model: "m", apiKey: "k" })
    .complete({ system: "s", user: "u", maxTokens: 5 }),
  "@anthropic-ai/claude-agent-sdk": () => sessiond.claudeCodeRuntime({}).run(run).next(),
  "@openai/codex-sdk": () => sessiond.codexRuntime({}).run(run).next(),
  "@a2a-js/sdk": () => sessiond.a2aRuntime({ url: "http://127.0.0.1:9" }).run(run).next(),
  "gpt-tokenizer": () => sessiond.countTokens("hello"),
  pg: () => import("./dist/src/store/open.js")
    .then((m) => m.openStore({ backend: "postgres", url: "postgres://127.0.0.1:9/sessiond" })),
  "@discordjs/ws": () => import("./dist/src/channels/discord-gateway.js")
    .then((m) => m.openDiscordGateway({ api: "http://127.0.0.1:9", token: "t", onMessage: () => {} })),
  // Tracing imports all three at once (startTracing, checked below): each one's loader alone here.
  ...Object.fromEntries(
    ["@opentelemetry/sdk-trace", "@opentelemetry/resources", "@opentelemetry/exporter-trace-otlp-http"].map(
      (name) => [name, () => import("./dist/src/tracing/tracer.js").then((m) => m.TRACING_PACKAGES[name]())],
    ),
  ),
};
try {
  const { startTracing } = await import("./dist/src/tracing/tracer.js");
  await startTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9" }, "/nonexistent-sessiond-probe");
  console.error("startTracing started without its packages");
  process.exit(1);
} catch (error) {
  if (error.code !== "PACKAGE_MISSING" || !String(error.details?.package).startsWith("@opentelemetry/")) throw error;
}
const out = {};
for (const [name, use] of Object.entries(uses)) {
  // Twice: a failed load is not kept, and says the same the second time.
  for (let i = 0; i < 2; i++) {
    try { await use(); out[name] = "ran"; }
    catch (error) { out[name] = { code: error.code, message: error.message, package: error.details?.package }; }
  }
}
console.log(JSON.stringify(out));
`;

describe("optional peer packages", () => {
  let dir = "";
  beforeAll(() => {
    // The build, with every installed package but the optional ones: what a user who installed none sees.
    dir = mkdtempSync(join(tmpdir(), "sessiond-optional-"));
    cpSync(join(ROOT, "dist", "src"), join(dir, "dist", "src"), { recursive: true });
    cpSync(join(ROOT, "dist", "bundle"), join(dir, "dist", "bundle"), { recursive: true });
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "probe", type: "module" }));
    writeFileSync(join(dir, "probe.mjs"), PROBE);
    const modules = join(ROOT, "node_modules");
    for (const entry of readdirSync(modules)) {
      if (entry.startsWith(".")) continue;
      const names = entry.startsWith("@")
        ? readdirSync(join(modules, entry)).map((name) => `${entry}/${name}`)
        : [entry];
      for (const name of names) {
        if (OPTIONAL.includes(name) || name in ENTRY_PEERS) continue;
        mkdirSync(join(dir, "node_modules", name, ".."), { recursive: true });
        symlinkSync(join(modules, name), join(dir, "node_modules", name));
      }
    }
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("are the package's optional peer dependencies, kept by its own dev install", () => {
    const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as Record<
      string,
      Record<string, unknown>
    >;
    expect(Object.keys(manifest.peerDependencies ?? {}).sort()).toEqual(
      [...OPTIONAL, ...Object.keys(ENTRY_PEERS)].sort(),
    );
    for (const name of [...OPTIONAL, ...Object.keys(ENTRY_PEERS)]) {
      expect(manifest.peerDependenciesMeta?.[name]).toEqual({ optional: true });
      expect(manifest.dependencies?.[name]).toBeUndefined();
      expect(manifest.devDependencies?.[name]).toMatch(/^\d+\.\d+\.\d+$/);
    }
  });

  it("loads without them, and each one's first use names the package to install", async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ["probe.mjs"], { cwd: dir });
    const out = JSON.parse(stdout) as Record<string, { code: string; message: string; package: string }>;
    expect(Object.keys(out).sort()).toEqual([...OPTIONAL].sort());
    for (const name of OPTIONAL) {
      expect(out[name]).toMatchObject({ code: "PACKAGE_MISSING", package: name });
      expect(out[name]?.message).toContain(`npm install ${name}`);
    }
  });

  it("every other entry point of the build loads without an entry point's own peer; that entry point names it", async () => {
    const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
      exports: Record<string, { import?: string }>;
    };
    const script = `
      const out = {};
      for (const [path, target] of Object.entries(${JSON.stringify(manifest.exports)})) {
        if (!target.import) continue;
        try { await import(target.import); out[path] = "loaded"; }
        catch (error) { out[path] = error.message; }
      }
      console.log(JSON.stringify(out));`;
    const { stdout } = await promisify(execFile)(process.execPath, ["--input-type=module", "-e", script], {
      cwd: dir,
    });
    const out = JSON.parse(stdout) as Record<string, string>;
    for (const [peer, entry] of Object.entries(ENTRY_PEERS)) {
      const path = `./${entry.split("/").slice(1).join("/")}`;
      expect(out[path]).toMatch(new RegExp(`Cannot find package '${peer}'`));
      delete out[path];
    }
    expect(Object.values(out).length).toBeGreaterThan(5);
    expect(Object.entries(out).filter(([, result]) => result !== "loaded")).toEqual([]);
  });
});
