import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { createEngine, type Engine } from "../../src/engine.js";
import type { RuntimeTools } from "../../src/model/runtime.js";
import { type AnthropicServer, startAnthropicServer } from "../support/anthropic-server.js";
import { telegramDm } from "../support/envelopes.js";
import { FAKE_CLAUDE, FAKE_CODEX, useFakeCliState } from "../support/fake-clis.js";
import { type OpenAiServer, startOpenAiServer } from "../support/openai-server.js";
import { useTempDirs } from "../support/temp-dirs.js";

// The providers' usage objects, as their docs show them (see provider-shapes.test.ts).
const turnUsage = (prompt: number, cached: number) => ({
  prompt_tokens: prompt,
  completion_tokens: 20,
  total_tokens: prompt + 20,
  prompt_tokens_details: { cached_tokens: cached },
});
const ANTHROPIC_USAGE = {
  input_tokens: 50,
  cache_creation_input_tokens: 1000,
  cache_read_input_tokens: 2000,
  output_tokens: 200,
};
const PRICE = { input: 2, output: 10, cache_read: 1 };

const tempDir = useTempDirs();
useFakeCliState("FAKE_CLAUDE_STATE");
useFakeCliState("FAKE_CODEX_STATE");
let engine: Engine | undefined;
let openai: OpenAiServer;
let anthropic: AnthropicServer;

beforeAll(async () => {
  process.env.SESSIOND_LEDGER_TEST_KEY = "sk-ledger-test";
  openai = await startOpenAiServer();
  anthropic = await startAnthropicServer();
});
afterAll(async () => {
  await openai.close();
  await anthropic.close();
});
afterEach(async () => {
  await engine?.close();
  engine = undefined;
});

interface Row {
  kind: string;
  agent: string;
  session_id: string;
  key: string;
  model: string;
  input_tokens: number | null;
  output_tokens: number | null;
  cache_read_tokens: number | null;
  cache_write_tokens: number | null;
  reported_usd: number | null;
  usd: number | null;
  source: string | null;
}

/** The ledger file as written, read with SQLite itself. */
function ledgerRows(dataDir: string): Row[] {
  const db = new Database(join(dataDir, "cost-ledger.db"), { readonly: true });
  try {
    return db.prepare("SELECT * FROM cost_ledger ORDER BY seq").all() as Row[];
  } finally {
    db.close();
  }
}

const LOOKUP: RuntimeTools = {
  definitions: [
    {
      type: "function",
      function: { name: "lookup", description: "looks up", parameters: { type: "object", properties: {} } },
    },
  ],
  execute: async () => ({ content: "42" }),
};

function modelConfig(provider: "openai" | "anthropic", baseUrl: string, price?: typeof PRICE) {
  return {
    provider,
    model: provider === "openai" ? "gpt-4o" : "claude-test-model",
    baseUrl,
    apiKeyEnv: "SESSIOND_LEDGER_TEST_KEY",
    ...(price ? { price: { input: price.input, output: price.output, cacheRead: price.cache_read } } : {}),
  };
}

describe("every model call of the engine is one ledger entry", () => {
  it("OpenAI: a turn with a tool round, its title and a compaction are six entries (turn, tool round, title, turn, tool round, compaction), each priced by the config", async () => {
    // Turn rounds carry tools; the title asks for 24 tokens at most; the rest is the compaction summary.
    openai.setHandler((body) => {
      if (body.tools) {
        const afterTool = body.messages.some((m) => m.role === "tool");
        return afterTool
          ? { content: "the answer is 42", rawUsage: turnUsage(1200, 1000) }
          : { toolCalls: [{ name: "lookup", arguments: "{}" }], rawUsage: turnUsage(1100, 0) };
      }
      if (body.max_tokens === 24) return { content: "Looking up the answer", rawUsage: turnUsage(80, 0) };
      return { content: "The user asked; the answer was 42.", rawUsage: turnUsage(300, 0) };
    });
    const dataDir = tempDir("sessiond-ledger-engine-");
    engine = await createEngine({
      dataDir,
      models: { gpt: modelConfig("openai", openai.baseUrl, PRICE) },
      agentOptions: { main: { model: "gpt" } },
      titles: { model: "gpt" },
      compaction: { model: "gpt" },
      lifecycle: { sweepIntervalMs: 0 },
    });
    const first = await engine.turn(telegramDm("what is the answer?"), { tools: LOOKUP });
    expect(first.reply?.content).toBe("the answer is 42");
    await vi.waitFor(async () => expect((await engine?.sessions.get(first.key))?.title).not.toBe(""));
    await engine.turn(telegramDm("thanks"), { tools: LOOKUP });
    await engine.compact(first.key);
    await engine.close();
    engine = undefined;

    const rows = ledgerRows(dataDir);
    expect(rows.map((r) => r.kind)).toEqual([
      "turn",
      "tool_round",
      "title",
      "turn",
      "tool_round",
      "compaction",
    ]);
    for (const row of rows) {
      expect(row).toMatchObject({ agent: "main", key: first.key, model: "gpt-4o", source: "config" });
      expect(row.session_id).toBe(first.sessionId);
      expect(row.reported_usd).toBeNull();
    }
    // The round after the tool: 1200 prompt tokens of which 1000 cached; 200 fresh × 2 + 20 × 10 + 1000 × 1.
    expect(rows[1]).toMatchObject({ input_tokens: 1200, output_tokens: 20, cache_read_tokens: 1000 });
    expect(rows[1]?.usd).toBeCloseTo(0.0016, 12);
    expect(rows[0]).toMatchObject({ input_tokens: 1100, cache_read_tokens: 0 });
    expect(rows[0]?.usd).toBeCloseTo(0.0024, 12);
    expect(rows[2]).toMatchObject({ input_tokens: 80 });
    expect(rows[2]?.usd).toBeCloseTo(0.00036, 12);
    expect(rows[5]).toMatchObject({ input_tokens: 300 });
  });

  it("Anthropic streaming with cache tokens and no configured price: the cache counts kept, the price unknown (null)", async () => {
    anthropic.setHandler((body) =>
      body.tools && !JSON.stringify(body.messages).includes("tool_result")
        ? { toolUses: [{ id: "tu_1", name: "lookup", input: {} }], rawUsage: ANTHROPIC_USAGE }
        : { content: "done", rawUsage: ANTHROPIC_USAGE },
    );
    const dataDir = tempDir("sessiond-ledger-engine-");
    engine = await createEngine({
      dataDir,
      models: { claude: modelConfig("anthropic", anthropic.baseUrl) },
      agentOptions: { main: { model: "claude" } },
      titles: { enabled: false },
      lifecycle: { sweepIntervalMs: 0 },
    });
    const result = await engine.turn(telegramDm("hello"), { tools: LOOKUP });
    expect(result.reply?.content).toBe("done");
    const totals = await engine.agents.ledger.totals("session");
    expect(totals).toEqual([
      {
        group: result.sessionId,
        calls: 2,
        usd: null,
        unpricedCalls: 2,
        inputTokens: 100,
        outputTokens: 400,
        cacheReadTokens: 4000,
        cacheWriteTokens: 2000,
      },
    ]);
    await engine.close();
    engine = undefined;
    const rows = ledgerRows(dataDir);
    expect(rows.map((r) => [r.kind, r.usd, r.source])).toEqual([
      ["turn", null, null],
      ["tool_round", null, null],
    ]);
    expect(rows[0]).toMatchObject({
      model: "claude-test-model",
      cache_write_tokens: 1000,
      cache_read_tokens: 2000,
    });
  });

  it("Claude Code: one entry per run priced by its total_cost_usd (source provider); Codex: its tokens, price unknown", async () => {
    const claudeDir = tempDir("sessiond-ledger-engine-");
    engine = await createEngine({
      dataDir: claudeDir,
      agentOptions: {
        main: { runtime: "claude-code", executable: FAKE_CLAUDE, cwd: tempDir("sessiond-cwd-") },
      },
      titles: { enabled: false },
      lifecycle: { sweepIntervalMs: 0 },
    });
    await engine.turn(telegramDm("[total=2] hello"));
    await engine.turn(telegramDm("[total=5] again"));
    expect(await engine.agents.ledger.totals("agent")).toEqual([
      expect.objectContaining({ group: "main", calls: 2, usd: 5, unpricedCalls: 0, inputTokens: 20 }),
    ]);
    await engine.close();
    engine = undefined;
    expect(ledgerRows(claudeDir).map((r) => [r.kind, r.model, r.reported_usd, r.usd, r.source])).toEqual([
      ["turn", "claude-code", 2, 2, "provider"],
      ["turn", "claude-code", 3, 3, "provider"],
    ]);

    const codexDir = tempDir("sessiond-ledger-engine-");
    engine = await createEngine({
      dataDir: codexDir,
      agentOptions: { main: { runtime: "codex", executable: FAKE_CODEX, cwd: tempDir("sessiond-cwd-") } },
      titles: { enabled: false },
      lifecycle: { sweepIntervalMs: 0 },
    });
    await engine.turn(telegramDm("fix it"));
    await engine.close();
    engine = undefined;
    expect(
      ledgerRows(codexDir).map((r) => [r.kind, r.input_tokens, r.output_tokens, r.usd, r.source]),
    ).toEqual([["turn", 20, 7, null, null]]);
  });

  it("an OpenAI-compatible server that reports usage.cost: its figure is the price (source provider); an incognito key's calls stay out of the file", async () => {
    // OpenRouter's usage shape (openrouter.ai/docs/use-cases/usage-accounting).
    openai.setHandler(() => ({
      content: "ok",
      rawUsage: {
        prompt_tokens: 194,
        completion_tokens: 2,
        total_tokens: 196,
        cost: 0.95,
        prompt_tokens_details: { cached_tokens: 0, cache_write_tokens: 100 },
      },
    }));
    const dataDir = tempDir("sessiond-ledger-engine-");
    engine = await createEngine({
      dataDir,
      models: { routed: { ...modelConfig("openai", openai.baseUrl, PRICE), model: "openrouter/auto" } },
      agentOptions: { main: { model: "routed" } },
      incognito: { for: [{ channel: "discord" }] },
      titles: { enabled: false },
      lifecycle: { sweepIntervalMs: 0 },
    });
    await engine.turn(telegramDm("hello"));
    const secret = await engine.turn({
      channel: "discord",
      chat: { type: "direct", id: "7" },
      sender: { id: "7" },
      text: "psst",
    });
    expect(secret.key).toContain("discord");
    const [total] = await engine.agents.ledger.totals("agent");
    expect(total).toMatchObject({
      group: "main",
      calls: 2,
      usd: 1.9,
      unpricedCalls: 0,
      cacheWriteTokens: 200,
    });
    await engine.close();
    engine = undefined;
    const rows = ledgerRows(dataDir);
    expect(rows.map((r) => [r.model, r.reported_usd, r.usd, r.source, r.cache_write_tokens])).toEqual([
      ["openrouter/auto", 0.95, 0.95, "provider", 100],
    ]);
    expect(rows.some((r) => r.key === secret.key || r.session_id === secret.sessionId)).toBe(false);
  });
});
