import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load.js";
import { createEngine } from "../../src/engine.js";
import { incognitoMatcher } from "../../src/incognito/rules.js";
import { useTempDirs } from "../support/temp-dirs.js";
import { filesHolding, uniqueMarker } from "./scan.js";

const tempDir = useTempDirs();
const routing = { defaultAgent: "main", agents: ["main", "scratch"] };

describe("session.incognito_for", () => {
  it("reads key patterns and {key, channel, agent} rules, and the limits", () => {
    const dir = tempDir("sessiond-incognito-config-");
    writeFileSync(
      join(dir, "sessiond.yaml"),
      [
        "session:",
        "  incognito_for:",
        '    - "openai-compat:*"',
        "    - { channel: slack }",
        "    - { agent: scratch, key: 'scratch:*' }",
        "  incognito_max_keys: 50",
        "  incognito_max_bytes: 100000",
        "",
      ].join("\n"),
    );
    const { config } = loadConfig({ cwd: dir, env: {} });
    expect(config.incognito).toEqual({
      for: [{ key: "openai-compat:*" }, { channel: "slack" }, { agent: "scratch", key: "scratch:*" }],
      maxKeys: 50,
      maxBytes: 100000,
    });
  });

  it("refuses a rule that names nothing, and a limit that is not a whole number, with the path", () => {
    const dir = tempDir("sessiond-incognito-config-");
    writeFileSync(join(dir, "sessiond.yaml"), "session:\n  incognito_for:\n    - {}\n");
    expect(() => loadConfig({ cwd: dir, env: {} })).toThrow(/session\.incognito_for/);
    writeFileSync(join(dir, "sessiond.yaml"), "session:\n  incognito_max_keys: 1.5\n");
    expect(() => loadConfig({ cwd: dir, env: {} })).toThrow(/session\.incognito_max_keys/);
  });

  it("matches the whole key with `*` as any run, and the channel and agent the key names", () => {
    const match = incognitoMatcher(
      [
        { key: "openai-compat:*" },
        { channel: "slack" },
        { agent: "scratch", key: "*:private" },
        { key: "a.b" },
      ],
      routing,
    );
    expect(match("openai-compat:10.0.0.1")).toBe(true);
    expect(match("x:openai-compat:1")).toBe(false);
    expect(match("slack:U123")).toBe(true);
    expect(match("main:slack:U123")).toBe(true);
    expect(match("telegram:42")).toBe(false);
    expect(match("scratch:telegram:private")).toBe(true);
    expect(match("main:telegram:private")).toBe(false);
    // Nothing but `*` is special.
    expect(match("a.b")).toBe(true);
    expect(match("axb")).toBe(false);
    expect(incognitoMatcher([], routing)("slack:U1")).toBe(false);
  });
});

describe("runtime sessions of incognito keys", () => {
  it("stay in memory: the runtime-sessions file never holds their id, a stored key's goes there", async () => {
    const dir = tempDir("sessiond-incognito-runtime-");
    const secretId = uniqueMarker();
    const storedId = uniqueMarker();
    let engine = await createEngine({ dataDir: dir });
    await engine.turn(
      { channel: "telegram", chat: { type: "direct", id: "9" }, sender: { id: "9" }, text: "hi" },
      { incognito: true },
    );
    const save = (key: string, id: string) =>
      engine.agents.store.save({ agent: "main", key, runtime: "claude-code", id, savedAt: Date.now() });
    await save("telegram:9", secretId);
    await save("telegram:10", storedId);
    await engine.agents.store.setAttention("main", "telegram:9", `failed ${secretId}`);
    expect((await engine.agents.conversation("telegram:9")).runtimeSessions.map((r) => r.id)).toEqual([
      secretId,
    ]);
    expect([...(await engine.agents.store.attentionKeys())]).toContain("telegram:9");
    await engine.close();
    expect(filesHolding(dir, storedId)).not.toEqual([]);
    expect(filesHolding(dir, secretId)).toEqual([]);
    engine = await createEngine({ dataDir: dir });
    try {
      expect(await engine.agents.store.forKey("telegram:9")).toEqual([]);
      expect((await engine.agents.store.forKey("telegram:10")).map((r) => r.id)).toEqual([storedId]);
    } finally {
      await engine.close();
    }
  });
});
