import { spawn } from "node:child_process";
import { chmodSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { type LocalServer, sendJson, startLocalServer } from "../support/http-server.js";
import { type CliResult, seed, useTempDir } from "./helpers.js";

const tempDir = useTempDir();
const CLI = fileURLToPath(new URL("../../dist/bundle/main.js", import.meta.url));
const servers: LocalServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

function doctor(cwd: string, env: Record<string, string>, args: string[] = []): Promise<CliResult> {
  const base = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith("SESSIOND_")),
  );
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, "doctor", ...args], { cwd, env: { ...base, ...env } });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (c: string) => (stdout += c));
    child.stderr.setEncoding("utf8").on("data", (c: string) => (stderr += c));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** A port nothing listens on: bound by the OS, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe("sessiond doctor", () => {
  it("says ok for each part of a sound setup, against real local endpoints", async () => {
    const dir = tempDir();
    const model = await startLocalServer((_req, res) => sendJson(res, 200, { data: [] }));
    const telegram = await startLocalServer((_req, res) => sendJson(res, 404, { ok: false }));
    servers.push(model, telegram);
    await seed(dir, async (engine) => {
      await engine.append("web:x", [{ type: "message", role: "user", content: "hello" }]);
    });
    writeFileSync(join(dir, "gateway-token"), "t".repeat(43), { mode: 0o600 });
    chmodSync(join(dir, "gateway-token"), 0o600);
    writeFileSync(
      join(dir, "sessiond.yaml"),
      `data_dir: .
models:
  local: { provider: openai, model: m, base_url: "${model.origin}/v1", api_key_env: DOCTOR_KEY }
agents: [{ id: main, model: local }]
channels:
  telegram: { token_env: DOCTOR_TG, mode: polling, api_base_url: "${telegram.origin}" }
`,
    );
    const result = await doctor(dir, { DOCTOR_KEY: "k", DOCTOR_TG: "123:abc" });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split("\n");
    expect(lines.every((l) => l.startsWith("ok  "))).toBe(true);
    expect(result.stdout).toMatch(/^ok {4}config: .*sessiond\.yaml$/m);
    expect(result.stdout).toMatch(/^ok {4}store: sqlite at .*sessiond\.db: opens, schema current$/m);
    expect(result.stdout).toMatch(/^ok {4}disk: [\d.]+ GiB free under /m);
    expect(result.stdout).toMatch(/^ok {4}token: .*gateway-token \(mode 0600\)$/m);
    expect(result.stdout).toContain(`ok    models.local: ${model.origin}/v1/models reachable (HTTP 200)`);
    expect(result.stdout).toContain(`ok    channels.telegram: ${telegram.origin} reachable (HTTP 404)`);
    expect(model.requests.map((r) => r.path)).toEqual(["/v1/models"]);
  });

  it("names every problem at once, one line each, and exits 1", async () => {
    const dir = tempDir();
    const down = await closedPort();
    await seed(dir, async (engine) => {
      await engine.append("web:x", [{ type: "message", role: "user", content: "hello" }]);
    });
    // A schema this sessiond does not know yet: written by a newer one.
    const db = new Database(join(dir, "sessiond.db"));
    db.pragma("user_version = 99");
    db.close();
    writeFileSync(join(dir, "gateway-token"), "t".repeat(43));
    chmodSync(join(dir, "gateway-token"), 0o644);
    writeFileSync(
      join(dir, "sessiond.yaml"),
      `data_dir: .
models:
  local: { provider: openai, model: m, base_url: "http://127.0.0.1:${down}/v1", api_key_env: DOCTOR_UNSET_KEY }
agents: [{ id: main, model: local }]
channels:
  slack: { token_env: DOCTOR_UNSET_SLACK, signing_secret_env: DOCTOR_UNSET_SIGNING, api_base_url: "http://127.0.0.1:${down}" }
`,
    );
    const result = await doctor(dir, {});
    expect(result.code).toBe(1);
    expect(result.stderr).toBe("error: 7 problems found\n");
    const failures = result.stdout.split("\n").filter((l) => l.startsWith("FAIL"));
    expect(failures).toEqual(
      [
        "FAIL  models.local.api_key_env: the environment variable DOCTOR_UNSET_KEY is not set",
        "FAIL  channels.slack: the environment variable DOCTOR_UNSET_SLACK is not set",
        "FAIL  channels.slack: the environment variable DOCTOR_UNSET_SIGNING is not set",
        expect.stringMatching(
          /^FAIL {2}store: sqlite at .*sessiond\.db: \[STORE_SCHEMA_NEWER\] .*sessiond\.db: the database's schema is version 99, newer than this sessiond knows \(\d+\): upgrade sessiond, or restore the backup taken before the upgrade$/,
        ),
        `FAIL  token: ${join(dir, "gateway-token")} is readable by others (mode 0644): chmod 600 ${join(dir, "gateway-token")}`,
        `FAIL  models.local: http://127.0.0.1:${down}/v1/models not reachable (ECONNREFUSED)`,
        `FAIL  channels.slack: http://127.0.0.1:${down} not reachable (ECONNREFUSED)`,
      ].slice(0, 7),
    );
  });

  it("reports every config problem with its file and line", async () => {
    const dir = tempDir();
    writeFileSync(
      join(dir, "sessiond.yaml"),
      "store:\n  backend: sqlit\nagents:\n  - id: main\n  - id: main\n    model: nowhere\n",
    );
    const result = await doctor(dir, {}, ["--offline"]);
    expect(result.code).toBe(1);
    const file = join(dir, "sessiond.yaml");
    expect(result.stdout.trimEnd().split("\n")).toEqual([
      expect.stringMatching(new RegExp(`^FAIL {2}config: ${file}:2: store\\.backend: `)),
      `FAIL  config: ${file}:6: agents.1.model: no model named "nowhere" (models: none)`,
      `FAIL  config: ${file}:5: agents.1.id: agent id "main" is already agents.0`,
    ]);
  });
});
