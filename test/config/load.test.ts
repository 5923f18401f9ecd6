import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load.js";

describe("loadConfig", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "sessiond-config-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const write = (text: string, name = "sessiond.yaml") => {
    writeFileSync(join(dir, name), text);
    return join(dir, name);
  };

  it("defaults to SQLite under ./.sessiond with no file", () => {
    const { config, file, warnings } = loadConfig({ cwd: dir, env: {} });
    expect(file).toBeUndefined();
    expect(warnings).toEqual([]);
    expect(config.dataDir).toBe(join(dir, ".sessiond"));
    expect(config.store).toEqual({ backend: "sqlite", path: join(dir, ".sessiond", "sessiond.db") });
  });

  it("reads sessiond.yaml from the working directory, GoClaw-style keys included", () => {
    write(`
data_dir: data
store:
  durability: relaxed
  commit_interval_ms: 2
agents:
  - id: ops
  - id: dev
default_agent: ops
session:
  dm_scope: per-peer
  identity_links:
    alice: ["telegram:123", "discord:dm:987"]
  max_queued_turns: 4
`);
    const { config, file, warnings } = loadConfig({ cwd: dir, env: {} });
    expect(file).toBe(join(dir, "sessiond.yaml"));
    expect(warnings).toEqual([]);
    expect(config).toMatchObject({
      dataDir: join(dir, "data"),
      store: {
        backend: "sqlite",
        path: join(dir, "data", "sessiond.db"),
        durability: "relaxed",
        commitIntervalMs: 2,
      },
      agents: ["ops", "dev"],
      defaultAgent: "ops",
      routing: { dmScope: "per-peer", identityLinks: { alice: ["telegram:123", "discord:dm:987"] } },
      maxQueuedTurns: 4,
    });
  });

  it("reads models, compaction, titles and per-agent settings", () => {
    write(`
models:
  local: { provider: openai, base_url: "http://127.0.0.1:11434/v1", model: llama3.1, api_key_env: OLLAMA_KEY, context_window: 8192 }
compaction: { model: local, max_messages: 80, keep_recent: 30, summary_max_chars: 1500 }
titles: { enabled: false }
agents:
  - id: main
    model: local
    instructions: Be brief.
    durability: meaningful
    compaction: { max_tokens: 5000 }
`);
    const { config, warnings } = loadConfig({ cwd: dir, env: {} });
    expect(warnings).toEqual([]);
    expect(config.models).toEqual({
      local: {
        provider: "openai",
        baseUrl: "http://127.0.0.1:11434/v1",
        model: "llama3.1",
        apiKeyEnv: "OLLAMA_KEY",
        contextWindow: 8192,
      },
    });
    expect(config.compaction).toEqual({
      model: "local",
      maxMessages: 80,
      keepRecent: 30,
      summaryMaxChars: 1500,
    });
    expect(config.titles).toEqual({ enabled: false });
    expect(config.agentOptions).toEqual({
      main: {
        model: "local",
        instructions: "Be brief.",
        durability: "meaningful",
        compaction: { maxTokens: 5000 },
      },
    });
  });

  it("warns about unknown keys with their path, and about the retired session.maintenance", () => {
    write(`
colour: blue
store:
  backend: sqlite
  turbo: true
session:
  maintenance: { prune_after: 30d }
  dm_scope: main
`);
    const { config, warnings } = loadConfig({ cwd: dir, env: {} });
    expect(warnings.some((w) => w.includes("session.maintenance"))).toBe(true);
    expect(warnings.some((w) => w.includes("unknown key colour"))).toBe(true);
    expect(warnings.some((w) => w.includes("unknown key store.turbo"))).toBe(true);
    expect(warnings).toHaveLength(3);
    expect(config.routing?.dmScope).toBe("main");
  });

  it("fails clearly on a wrong value, naming its path", () => {
    write("session:\n  dm_scope: everyone\n");
    expect(() => loadConfig({ cwd: dir, env: {} })).toThrow(/session\.dm_scope/);
    write("store: [1, 2\n");
    expect(() => loadConfig({ cwd: dir, env: {} })).toThrowError(
      expect.objectContaining({ code: "CONFIG_INVALID" }),
    );
  });

  it("reports every invalid path in one message, unknown model names included", () => {
    write(`
store: { backend: sqlit, commit_interval_ms: 5000 }
models:
  local: { provider: openai, model: llama3.1 }
agents:
  - id: main
    model: nosuch
    turn_timeout: 0
  - id: dev
    runtime: claude-code
    model: sonnet
compaction: { model: gone, max_messages: 1 }
titles: { model: gone2 }
session: { dm_scope: wrong }
`);
    const error = (() => {
      try {
        loadConfig({ cwd: dir, env: {} });
      } catch (e) {
        return e as Error & { code: string };
      }
    })();
    expect(error?.code).toBe("CONFIG_INVALID");
    const lines = error?.message
      .split("\n")
      .slice(1)
      .map((l) => l.trim().split(":")[0]);
    expect(lines).toEqual([
      "store.backend",
      "store.commit_interval_ms",
      "agents.0.turn_timeout",
      "compaction.max_messages",
      "session.dm_scope",
      "agents.0.model",
      "compaction.model",
      "titles.model",
    ]);
    expect(error?.message).toContain('agents.0.model: no model named "nosuch" (models: local)');
  });

  it("reports every reset rule and trigger problem at once, once the schema holds", () => {
    write(`
models:
  local: { provider: openai, model: llama3.1 }
agents: [{ id: main, model: lokal }]
session:
  reset: { mode: daily, timezone: Mars/Olympus }
  reset_by_type: { group: { mode: idle } }
  reset_by_channel: { slack: { direct: { mode: daily, timezone: Moon/Base } } }
`);
    expect(() => loadConfig({ cwd: dir, env: {} })).toThrowError(
      expect.objectContaining({
        code: "CONFIG_INVALID",
        message: expect.stringMatching(
          /agents\.0\.model: no model named "lokal" \(models: local\)\n {2}session\.reset: unknown time zone "Mars\/Olympus"\n {2}session\.reset_by_type\.group: mode: idle needs idle_minutes\n {2}session\.reset_by_channel\.slack\.direct: unknown time zone "Moon\/Base"$/,
        ),
      }),
    );
  });

  it("reads an agent's permission mode and Claude Code's own compaction setting", () => {
    write(`
agents:
  - { id: dev, runtime: claude-code, permission: ask-first, self_compact: false, self_compact_window: 150000 }
  - { id: cx, runtime: codex, permission: auto }
`);
    const { config } = loadConfig({ cwd: dir, env: {} });
    expect(config.agentOptions?.dev).toMatchObject({
      permission: "ask-first",
      selfCompact: "off",
      selfCompactWindow: 150_000,
    });
    expect(config.agentOptions?.cx).toMatchObject({ permission: "auto" });
    write("agents: [{ id: dev, permission: sometimes, self_compact_window: 10 }]\n");
    expect(() => loadConfig({ cwd: dir, env: {} })).toThrow(
      /agents\.0\.permission: .*\n {2}agents\.0\.self_compact_window: /,
    );
  });

  it("lets SESSIOND_* variables win over the file", () => {
    const file = write("store:\n  durability: relaxed\n", "custom.yaml");
    const { config } = loadConfig({
      cwd: "/",
      env: { SESSIOND_CONFIG: file, SESSIOND_DATA_DIR: "/srv/sd", SESSIOND_DURABILITY: "strict" },
    });
    expect(config.store).toEqual({ backend: "sqlite", path: "/srv/sd/sessiond.db", durability: "strict" });
    expect(loadConfig({ cwd: dir, env: { SESSIOND_STORE: "memory" } }).config.store).toEqual({
      backend: "memory",
    });
    expect(() => loadConfig({ cwd: dir, env: { SESSIOND_STORE: "mongo" } })).toThrow(/SESSIOND_STORE/);
    expect(() => loadConfig({ cwd: dir, env: { SESSIOND_CONFIG: "missing.yaml" } })).toThrow(/not found/);
  });
});
