import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callEntry, MemoryCostLedger } from "../../src/ledger/index.js";
import { anthropicModel } from "../../src/runtimes/llm/anthropic.js";
import {
  type ChatUsage,
  createOpenAiClient,
  openAiChatModel,
  streamChat,
} from "../../src/runtimes/llm/openai-chat.js";
import { type AnthropicServer, startAnthropicServer } from "../support/anthropic-server.js";
import { type OpenAiServer, startOpenAiServer } from "../support/openai-server.js";

// Usage objects as the providers document them, sent by the local servers through the real SDKs.
// OpenAI Chat Completions: prompt_tokens include prompt_tokens_details.cached_tokens.
const OPENAI_USAGE = {
  prompt_tokens: 2006,
  completion_tokens: 300,
  total_tokens: 2306,
  prompt_tokens_details: { cached_tokens: 1920, audio_tokens: 0 },
  completion_tokens_details: {
    reasoning_tokens: 0,
    audio_tokens: 0,
    accepted_prediction_tokens: 0,
    rejected_prediction_tokens: 0,
  },
};
// OpenRouter (openrouter.ai/docs/use-cases/usage-accounting): `cost` in credits (USD), cache writes in details.
const OPENROUTER_USAGE = {
  completion_tokens: 2,
  completion_tokens_details: { reasoning_tokens: 0 },
  cost: 0.95,
  cost_details: { upstream_inference_cost: 19 },
  prompt_tokens: 194,
  prompt_tokens_details: { cached_tokens: 0, cache_write_tokens: 100, audio_tokens: 0 },
  total_tokens: 196,
};
// Anthropic Messages: input_tokens exclude the cache reads and writes, reported apart.
const ANTHROPIC_USAGE = {
  input_tokens: 50,
  cache_creation_input_tokens: 1000,
  cache_read_input_tokens: 2000,
  output_tokens: 200,
};

const KEY = "sk-test-ledger";
const context = {
  agent: "main",
  sessionId: "s1",
  key: "telegram:dm:42",
  kind: "turn" as const,
  at: "2026-12-06T10:00:00.000Z",
};

describe("ledger entries from the providers' real usage shapes", () => {
  let openai: OpenAiServer;
  let anthropic: AnthropicServer;
  beforeAll(async () => {
    openai = await startOpenAiServer();
    anthropic = await startAnthropicServer();
  });
  afterAll(async () => {
    await openai.close();
    await anthropic.close();
  });

  it("OpenAI streaming: cached tokens kept, priced by the configured price with cache reads at their rate", async () => {
    openai.setHandler(() => ({ content: "hi", rawUsage: OPENAI_USAGE }));
    const client = createOpenAiClient({ baseUrl: openai.baseUrl, model: "gpt-4o", apiKey: KEY });
    let usage: ChatUsage | undefined;
    for await (const event of streamChat(client, {
      model: "gpt-4o",
      messages: [{ role: "user", content: "x" }],
    })) {
      if (event.type === "done") usage = event.result.usage;
    }
    const entry = callEntry({ ...context, model: "gpt-4o" }, "openai", usage, {
      input: 2.5,
      output: 10,
      cacheRead: 1.25,
    });
    expect(entry).toMatchObject({
      inputTokens: 2006,
      outputTokens: 300,
      cacheReadTokens: 1920,
      source: "config",
    });
    // 86 fresh × 2.5 + 300 × 10 + 1920 × 1.25, per million
    expect(entry.usd).toBe(0.005615);
  });

  it("OpenAI without a known price: unknown (null), never 0, and totals say so", async () => {
    openai.setHandler(() => ({ content: "hi", rawUsage: OPENAI_USAGE }));
    const model = openAiChatModel({ baseUrl: openai.baseUrl, model: "gpt-unknown", apiKey: KEY });
    const completion = await model.complete({ system: "s", user: "u", maxTokens: 10 });
    const entry = callEntry(
      { ...context, model: completion.model, kind: "title" },
      "openai",
      completion,
      undefined,
    );
    expect(entry.usd).toBeNull();
    expect(entry.source).toBeNull();
    expect(entry.cacheReadTokens).toBe(1920);
    const ledger = new MemoryCostLedger();
    await ledger.record(entry);
    const [total] = await ledger.totals("session");
    expect(total).toMatchObject({ calls: 1, usd: null, unpricedCalls: 1, inputTokens: 2006 });
  });

  it("an OpenAI-compatible server reporting usage.cost: the provider's figure wins over a configured price", async () => {
    openai.setHandler(() => ({ content: "hi", rawUsage: OPENROUTER_USAGE }));
    const model = openAiChatModel({ baseUrl: openai.baseUrl, model: "openrouter/auto", apiKey: KEY });
    const completion = await model.complete({ system: "s", user: "u", maxTokens: 10 });
    const entry = callEntry(
      { ...context, model: completion.model, kind: "compaction" },
      "openai",
      completion,
      {
        input: 1,
        output: 1,
      },
    );
    expect(entry).toMatchObject({
      usd: 0.95,
      source: "provider",
      reportedUsd: 0.95,
      cacheWriteTokens: 100,
      cacheReadTokens: 0,
    });
  });

  it("Anthropic with cache tokens: reads and writes priced apart, input_tokens not double-counted", async () => {
    anthropic.setHandler(() => ({ content: "hi", rawUsage: ANTHROPIC_USAGE }));
    const model = anthropicModel({ baseUrl: anthropic.baseUrl, model: "claude-test-model", apiKey: KEY });
    const completion = await model.complete({ system: "s", user: "u", maxTokens: 10 });
    const entry = callEntry(
      { ...context, model: completion.model, kind: "summary" },
      "anthropic",
      completion,
      {
        input: 3,
        output: 15,
        cacheRead: 0.3,
        cacheWrite: 3.75,
      },
    );
    expect(entry).toMatchObject({
      inputTokens: 50,
      outputTokens: 200,
      cacheReadTokens: 2000,
      cacheWriteTokens: 1000,
    });
    // 50 × 3 + 200 × 15 + 2000 × 0.3 + 1000 × 3.75, per million
    expect(entry.usd).toBe(0.0075);
    expect(entry.source).toBe("config");
  });

  it("a reply with no usage at all: no tokens invented, price unknown", async () => {
    openai.setHandler(() => ({ content: "hi", usage: null }));
    const model = openAiChatModel({ baseUrl: openai.baseUrl, model: "gpt-4o", apiKey: KEY });
    const completion = await model.complete({ system: "s", user: "u", maxTokens: 10 });
    const entry = callEntry({ ...context, model: "gpt-4o" }, "openai", completion, {
      input: 2.5,
      output: 10,
    });
    expect(entry.inputTokens).toBeUndefined();
    expect(entry.usd).toBeNull();
  });
});
