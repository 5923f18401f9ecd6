import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { CONVERSATION_KEY_FILE } from "../../src/tracing/settings.js";
import { startOpenAiServer } from "../support/openai-server.js";
import { startOtlpReceiver } from "./otlp-receiver.js";

const CLI = resolve("dist/bundle/main.js");
const TOKEN = "otel-off-token-0123456789abcdef";
const dir = mkdtempSync(join(tmpdir(), "sessiond-otel-off-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
// Every ES module the child loads, printed to stderr (as test/cli/lazy-load.test.ts does).
writeFileSync(
  join(dir, "hooks.mjs"),
  'export async function load(url, context, next) { process._rawDebug("LOAD " + url); return next(url, context); }',
);
writeFileSync(
  join(dir, "register.mjs"),
  `import { register } from "node:module";\nregister(${JSON.stringify(pathToFileURL(join(dir, "hooks.mjs")).href)});\n`,
);

/** `serve` with `env`, one chat turn through the local model, then SIGTERM: what it loaded and printed. */
async function serveOneTurn(
  name: string,
  env: Record<string, string>,
): Promise<{ loads: string[]; out: string; data: string; sent: unknown }> {
  const data = join(dir, name);
  const llm = await startOpenAiServer();
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !key.startsWith("OTEL_")),
  );
  const child = spawn(
    process.execPath,
    ["--import", pathToFileURL(join(dir, "register.mjs")).href, CLI, "serve", "--port", "0"],
    {
      cwd: dir,
      env: {
        ...inherited,
        SESSIOND_TOKEN: TOKEN,
        SESSIOND_DATA_DIR: data,
        SESSIOND_CONFIG: join(dir, `${name}.yaml`),
        ...env,
      },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  writeFileSync(
    join(dir, `${name}.yaml`),
    `models: { local: { provider: openai, base_url: "${llm.baseUrl}", model: m } }\nagents: [{ id: main, model: local }]\n`,
  );
  let out = "";
  let sent: string | string[] | undefined;
  let err = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    out += chunk;
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    err += chunk;
  });
  const exited = new Promise<void>((r) => child.once("close", () => r()));
  try {
    const url = await new Promise<string>((ok, fail) => {
      const check = () => {
        const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
        if (match) ok(match[1] as string);
      };
      child.stdout.on("data", check);
      child.once("close", (code) => fail(new Error(`exited ${code}: ${out}${err.slice(-2000)}`)));
    });
    const res = await fetch(`${url}/api/chat`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${TOKEN}`,
        "content-type": "application/json",
        traceparent: `00-${"a".repeat(32)}-${"b".repeat(16)}-01`,
      },
      body: JSON.stringify({ message: "hi" }),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { reply: string }).reply).toBe("echo: hi");
    sent = llm.requests.at(-1)?.headers.traceparent;
  } finally {
    child.kill("SIGTERM");
    await exited;
    await llm.close();
  }
  const loads = err.split("\n").filter((line) => line.startsWith("LOAD "));
  return { loads, out, data, sent };
}

describe("tracing on and off", () => {
  it("an OTLP endpoint loads the exporter packages and writes the conversation key once, mode 0600", async () => {
    const receiver = await startOtlpReceiver();
    try {
      const { loads, data, sent } = await serveOneTurn("on", {
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.origin,
      });
      expect(sent).toMatch(/^00-a{32}-[0-9a-f]{16}-01$/);
      expect(loads.some((line) => line.includes("@opentelemetry/exporter-trace-otlp-http/"))).toBe(true);
      const key = join(data, CONVERSATION_KEY_FILE);
      expect(statSync(key).mode & 0o777).toBe(0o600);
      const first = readFileSync(key, "utf8");
      expect(first).toMatch(/^[0-9a-f]{64}\n$/);
      await serveOneTurn("on", { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.origin });
      expect(readFileSync(key, "utf8")).toBe(first);
      expect(receiver.spans.filter((s) => s.name === "invoke_agent main")).toHaveLength(2);
    } finally {
      await receiver.close();
    }
  });

  it("without OTEL_* variables no OpenTelemetry package is loaded, no key file is written, no header is sent", async () => {
    const { loads, out, data, sent } = await serveOneTurn("plain", {});
    expect(sent).toBeUndefined();
    expect(loads.some((line) => line.includes("dist/bundle/"))).toBe(true);
    expect(loads.filter((line) => line.includes("@opentelemetry/"))).toEqual([]);
    expect(out).not.toContain("tracing:");
    expect(existsSync(join(data, CONVERSATION_KEY_FILE))).toBe(false);
  });

  it("OTEL_SDK_DISABLED=true wins over a configured endpoint: nothing is loaded or exported", async () => {
    const receiver = await startOtlpReceiver();
    try {
      const { loads, sent } = await serveOneTurn("disabled", {
        OTEL_SDK_DISABLED: "true",
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.origin,
      });
      expect(loads.filter((line) => line.includes("@opentelemetry/"))).toEqual([]);
      expect(receiver.requests).toEqual([]);
      expect(sent).toBeUndefined();
    } finally {
      await receiver.close();
    }
  });
});
