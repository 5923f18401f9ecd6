import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cli, seed, useTempDir } from "./helpers.js";

const tempDir = useTempDir();

/** One line on stderr, no stack frame, naming what the person can fix. */
function expectOneLine(stderr: string): void {
  const lines = stderr.trimEnd().split("\n");
  expect(lines, stderr).toHaveLength(1);
  expect(stderr).not.toMatch(/^\s+at /m);
  expect(stderr).not.toContain("unexpected failure");
}

async function seeded(): Promise<string> {
  const dir = tempDir();
  await seed(dir, async (engine) => {
    await engine.append("web:x", [{ type: "message", role: "user", content: "hello" }]);
  });
  return dir;
}

describe("errors a person can act on", () => {
  it("an address this machine does not have, for --host, is one line naming it", async () => {
    const dir = tempDir();
    // 192.0.2.0/24 is TEST-NET-1: never an address of a real machine.
    const result = await cli(dir, ["--data-dir", dir, "serve", "--host", "192.0.2.1", "--port", "0"]);
    expect(result.code).toBe(1);
    expectOneLine(result.stderr);
    expect(result.stderr).toMatch(
      /^error \[EADDRNOTAVAIL\]: cannot listen on 192\.0\.2\.1: address not available/,
    );
  });

  it("a directory given as the export file is a usage error naming the option, and leaves no temp file", async () => {
    const dir = await seeded();
    const out = join(dir, "out");
    mkdirSync(out);
    const result = await cli(dir, [
      "--data-dir",
      dir,
      "sessions",
      "export",
      "web:x",
      "--format",
      "jsonl",
      "--output",
      "out/",
    ]);
    expect(result.code).toBe(2);
    expectOneLine(result.stderr);
    expect(result.stderr).toContain(`--output ${out} is a directory`);
    expect(result.stderr).not.toContain(".tmp");
    expect(readdirSync(out)).toEqual([]);
    expect(readdirSync(dir).filter((name) => name.endsWith(".tmp"))).toEqual([]);
  });

  it("an export into a directory that does not exist names that directory, not a temp file", async () => {
    const dir = await seeded();
    const result = await cli(dir, [
      "--data-dir",
      dir,
      "sessions",
      "export",
      "web:x",
      "--output",
      "nowhere/x.jsonl",
    ]);
    expect(result.code).toBe(1);
    expectOneLine(result.stderr);
    expect(result.stderr).toContain(`the directory ${join(dir, "nowhere")} does not exist`);
    expect(result.stderr).not.toContain(".tmp");
  });

  it("a missing config file is one line naming it", async () => {
    const dir = tempDir();
    const result = await cli(dir, ["--config", "missing.yaml", "sessions", "list"]);
    expect(result.code).toBe(1);
    expectOneLine(result.stderr);
    expect(result.stderr).toContain(`config file not found: ${join(dir, "missing.yaml")}`);
  });

  it("every missing key and secret is named in one run, before the store is opened", async () => {
    const dir = tempDir();
    writeFileSync(
      join(dir, "sessiond.yaml"),
      `models:
  a: { provider: openai, model: m, base_url: "http://127.0.0.1:9/v1", api_key_env: SESSIOND_T_KEY_A }
  b: { provider: anthropic, model: m, api_key_env: SESSIOND_T_KEY_B }
agents:
  - id: main
    model: a
channels:
  telegram: { token_env: SESSIOND_T_TG_TOKEN, mode: polling, secret_env: SESSIOND_T_TG_UNREAD }
  slack: { token_env: SESSIOND_T_SLACK_TOKEN, signing_secret_env: SESSIOND_T_SLACK_SIGNING }
`,
    );
    const result = await cli(dir, ["--data-dir", dir, "serve", "--port", "0"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error \[CONFIG_INVALID\]: .*sessiond\.yaml: 5 secrets are missing:$/m);
    for (const variable of [
      "SESSIOND_T_KEY_A",
      "SESSIOND_T_KEY_B",
      "SESSIOND_T_TG_TOKEN",
      "SESSIOND_T_SLACK_TOKEN",
      "SESSIOND_T_SLACK_SIGNING",
    ]) {
      expect(result.stderr).toContain(`the environment variable ${variable} is not set`);
    }
    // Polling never reads the webhook secret, so it is not asked for.
    expect(result.stderr).not.toContain("SESSIOND_T_TG_UNREAD");
    expect(result.stderr).not.toMatch(/^\s+at /m);
    expect(existsSync(join(dir, "sessiond.db"))).toBe(false);
  });

  it("a duplicate agent id is refused, with every other problem of the file", async () => {
    const dir = tempDir();
    writeFileSync(
      join(dir, "sessiond.yaml"),
      "agents:\n  - id: main\n  - id: helper\n  - id: main\n    turn_timeout: 0\n",
    );
    const result = await cli(dir, ["--data-dir", dir, "sessions", "list"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('agents.2.id: agent id "main" is already agents.0');
    expect(result.stderr).toContain("agents.2.turn_timeout");
  });
});
