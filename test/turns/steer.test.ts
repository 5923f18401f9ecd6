import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { EngineConfig } from "../../src/config/engine-config.js";
import { createEngine, type Engine } from "../../src/engine.js";
import type { Entry } from "../../src/model/entry.js";
import type { Envelope } from "../../src/model/envelope.js";
import type { Runtime, RuntimeTools } from "../../src/model/runtime.js";
import { modelRuntime } from "../../src/runtimes/model.js";
import { SKIPPED_BY_STEER } from "../../src/runtimes/tool-round.js";
import type { TurnResult } from "../../src/turns/turn.js";
import { type AnthropicServer, startAnthropicServer } from "../support/anthropic-server.js";
import { until } from "../support/event-loop.js";
import { type OpenAiServer, startOpenAiServer } from "../support/openai-server.js";
import { anthropicToolRule, openAiToolRule } from "../support/provider-rules.js";

const KEY = "telegram:42";
const API_KEY = "sk-test-steer-0123456789abcdef";
const cleanups: Array<() => Promise<void> | void> = [];
let dataDir = "";

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

async function open(runtime?: Runtime, config: Partial<EngineConfig> = {}): Promise<Engine> {
  dataDir = mkdtempSync(join(tmpdir(), "sessiond-steer-"));
  const engine = await createEngine(
    {
      dataDir,
      titles: { enabled: false },
      agentOptions: { main: { queue: { mode: "steer", debounceMs: 0 } } },
      lifecycle: { sweepIntervalMs: 0 },
      ...config,
    },
    runtime ? { runtimes: new Map([["main", runtime]]) } : {},
  );
  cleanups.push(async () => {
    for (const waiting of engine.queue.list()) engine.queue.cancel(waiting.id);
    await engine.close();
  });
  return engine;
}

function dm(text: string): Envelope {
  return { channel: "telegram", chat: { type: "direct", id: "42" }, sender: { id: "42" }, text };
}

/** Submits while a turn runs: resolves once the input waits in the queue, as `steer`. */
async function queued(e: Engine, text: string): Promise<{ settled: Promise<TurnResult> }> {
  const settled = e.turn(dm(text));
  settled.catch(() => {});
  await until(() => e.queue.list().some((q) => q.preview === text));
  expect(e.queue.list().find((q) => q.preview === text)?.mode).toBe("steer");
  return { settled };
}

/** A tool whose first call blocks until released: the turn stays at its first tool call. */
function heldTool(): { tools: RuntimeTools; executed: string[]; reached: Promise<void>; release(): void } {
  const executed: string[] = [];
  let reach!: () => void;
  const reached = new Promise<void>((r) => {
    reach = r;
  });
  let release!: () => void;
  const released = new Promise<void>((r) => {
    release = r;
  });
  cleanups.push(() => release());
  const tools: RuntimeTools = {
    definitions: [
      {
        type: "function",
        function: { name: "lookup", description: "looks up", parameters: { type: "object", properties: {} } },
      },
    ],
    async execute(call) {
      executed.push(call.arguments);
      if (executed.length === 1) {
        reach();
        await released;
      }
      return { content: `found ${call.arguments}` };
    },
  };
  return { tools, executed, reached, release };
}

/** A model (local OpenAI server) that asks for one tool call, then answers `done` once it has the result. */
async function oneToolCallModel(): Promise<{ server: OpenAiServer; runtime: Runtime }> {
  const server = await startOpenAiServer((body) =>
    body.messages.some((m) => m.role === "tool")
      ? { content: "done" }
      : { toolCalls: [{ id: "call_1", name: "lookup", arguments: '{"q":1}' }] },
  );
  cleanups.push(() => server.close());
  const runtime = modelRuntime({
    provider: "openai",
    baseUrl: server.baseUrl,
    model: "test-model",
    apiKey: API_KEY,
  });
  return { server, runtime };
}

function transcript(history: Entry[]): string[] {
  return history.map((entry) =>
    entry.type === "message"
      ? `${entry.role}:${entry.content}${entry.toolCalls ? ` ${JSON.stringify(entry.toolCalls.map((c) => c.id))}` : ""}`
      : `${entry.type}`,
  );
}

/**
 * A turn that asked for two tool calls is held in the first; B and C arrive (mode steer) and wait, shown
 * as queued; once the first call returns, the second is skipped and B, C go with the next model call.
 */
async function steersAtToolBoundary(e: Engine): Promise<{ a: TurnResult; b: TurnResult; c: TurnResult }> {
  const held = heldTool();
  const a = e.turn(dm("A"), { tools: held.tools });
  await held.reached;
  const b = await queued(e, "B");
  const c = await queued(e, "C");
  expect(e.queue.list().map((q) => [q.preview, q.mode])).toEqual([
    ["B", "steer"],
    ["C", "steer"],
  ]);
  held.release();
  const results = { a: await a, b: await b.settled, c: await c.settled };
  // One tool ran; the second was skipped by the steer.
  expect(held.executed).toEqual(['{"q":1}']);
  expect(e.queue.list()).toEqual([]);
  expect(results.b.reply?.id).toBe(results.a.reply?.id);
  expect(results.c.reply?.id).toBe(results.a.reply?.id);
  expect(transcript(await e.history(KEY))).toEqual([
    "user:A",
    "user:B",
    "user:C",
    // The reply comes after the steers; the skipped call is recorded as failed.
    `assistant:on it. heard B, C ${JSON.stringify(["call_1", "failed"])}`,
    "usage",
  ]);
  // The stored history goes into the next turn's request, which the provider's rule accepts too.
  expect((await e.turn(dm("D"))).reply).toBeDefined();
  return results;
}

describe("steer: a message that arrives while a model turn runs joins it at its next tool boundary", () => {
  it("OpenAI: the steers follow the tool results, in order, and the request keeps every call paired", async () => {
    const violations: string[] = [];
    const server: OpenAiServer = await startOpenAiServer((body) => {
      const broken = openAiToolRule(body.messages);
      if (broken) {
        violations.push(broken);
        return { status: 400, body: { error: { message: broken, type: "invalid_request_error" } } };
      }
      if (!body.messages.some((m) => m.role === "tool")) {
        return {
          content: "on it. ",
          toolCalls: [
            { id: "call_1", name: "lookup", arguments: '{"q":1}' },
            { id: "call_2", name: "lookup", arguments: '{"q":2}' },
          ],
        };
      }
      const users = body.messages.filter((m) => m.role === "user").map((m) => m.content);
      return { content: `heard ${users.slice(-2).join(", ")}` };
    });
    cleanups.push(() => server.close());
    const e = await open(
      modelRuntime({ provider: "openai", baseUrl: server.baseUrl, model: "test-model", apiKey: API_KEY }),
    );
    await steersAtToolBoundary(e);
    expect(violations).toEqual([]);
    const requests = server.chatRequests();
    expect(requests).toHaveLength(3);
    expect(requests[1]?.messages.slice(-5)).toEqual([
      {
        role: "assistant",
        content: "on it. ",
        tool_calls: [
          { id: "call_1", type: "function", function: { name: "lookup", arguments: '{"q":1}' } },
          { id: "call_2", type: "function", function: { name: "lookup", arguments: '{"q":2}' } },
        ],
      },
      { role: "tool", tool_call_id: "call_1", content: 'found {"q":1}' },
      { role: "tool", tool_call_id: "call_2", content: SKIPPED_BY_STEER },
      { role: "user", content: "B" },
      { role: "user", content: "C" },
    ]);
  });

  it("Anthropic: the steers are text blocks after the tool_result blocks of the next user message", async () => {
    const violations: string[] = [];
    const server: AnthropicServer = await startAnthropicServer((body) => {
      const broken = anthropicToolRule(body.messages);
      if (broken) {
        violations.push(broken);
        return {
          status: 400,
          body: { type: "error", error: { type: "invalid_request_error", message: broken } },
        };
      }
      const last = body.messages.at(-1);
      if (!Array.isArray(last?.content)) {
        return {
          content: "on it. ",
          toolUses: [
            { id: "call_1", name: "lookup", input: { q: 1 } },
            { id: "call_2", name: "lookup", input: { q: 2 } },
          ],
        };
      }
      const texts = (last.content as Array<{ type: string; text?: string }>)
        .filter((b) => b.type === "text")
        .map((b) => b.text);
      return { content: `heard ${texts.join(", ")}` };
    });
    cleanups.push(() => server.close());
    const e = await open(
      modelRuntime({ provider: "anthropic", baseUrl: server.baseUrl, model: "claude-test", apiKey: API_KEY }),
    );
    await steersAtToolBoundary(e);
    expect(violations).toEqual([]);
    const requests = server.messageRequests();
    expect(requests).toHaveLength(3);
    expect(requests[1]?.messages.at(-1)).toEqual({
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: "call_1", content: 'found {"q":1}' },
        { type: "tool_result", tool_use_id: "call_2", content: SKIPPED_BY_STEER, is_error: true },
        { type: "text", text: "B" },
        { type: "text", text: "C" },
      ],
    });
  });

  it("a reset trigger does not steer: it waits and runs after the turn", async () => {
    const { server, runtime } = await oneToolCallModel();
    const e = await open(runtime);
    const held = heldTool();
    const a = e.turn(dm("A"), { tools: held.tools });
    await held.reached;
    const reset = await queued(e, "/new");
    held.release();
    expect((await a).reply?.content).toBe("done");
    expect((await reset.settled).notice).toBe("Started a new session.");
    expect(
      server
        .chatRequests()[1]
        ?.messages.filter((m) => m.role === "user")
        .map((m) => m.content),
    ).toEqual(["A"]);
  });

  it("a model answer without tool calls has no boundary: the steer runs as its own turn", async () => {
    let asked!: () => void;
    const first = new Promise<void>((r) => {
      asked = r;
    });
    let answer!: (reply: { content: string }) => void;
    const held = new Promise<{ content: string }>((r) => {
      answer = r;
    });
    cleanups.push(() => answer({ content: "late" }));
    const server = await startOpenAiServer((body) => {
      if (server.chatRequests().length > 1) return { content: `to ${body.messages.at(-1)?.content}` };
      asked();
      return held;
    });
    cleanups.push(() => server.close());
    const e = await open(
      modelRuntime({ provider: "openai", baseUrl: server.baseUrl, model: "test-model", apiKey: API_KEY }),
    );
    const a = e.turn(dm("A"), { tools: heldTool().tools });
    await first;
    const b = await queued(e, "B");
    answer({ content: "to A" });
    expect((await a).reply?.content).toBe("to A");
    expect((await b.settled).reply?.content).toBe("to B");
    expect(transcript(await e.history(KEY)).filter((line) => !line.startsWith("usage"))).toEqual([
      "user:A",
      "assistant:to A",
      "user:B",
      "assistant:to B",
    ]);
  });

  it("echo (no tool rounds): a steer waits and runs as its own turn, as followup", async () => {
    const e = await open();
    let release!: () => void;
    const released = new Promise<void>((r) => {
      release = r;
    });
    cleanups.push(() => release());
    let streaming!: () => void;
    const started = new Promise<void>((r) => {
      streaming = r;
    });
    const a = e.turn(dm("A"), {
      onEvent: async () => {
        streaming();
        await released;
      },
    });
    await started;
    const b = await queued(e, "B");
    release();
    const first = await a;
    const second = await b.settled;
    expect(first.reply?.content).toContain('You said: "A"');
    expect(first.reply?.content).not.toContain('"B"');
    expect(second.reply?.content).toContain('You said: "B"');
    expect(second.reply?.id).not.toBe(first.reply?.id);
    expect(transcript(await e.history(KEY)).filter((line) => line.startsWith("user:"))).toEqual([
      "user:A",
      "user:B",
    ]);
    expect(
      (await e.history(KEY)).map((entry) => (entry.type === "message" ? entry.role : entry.type)),
    ).toEqual(["user", "assistant", "user", "assistant"]);
  });
});

describe("compaction after a steered turn", () => {
  it("is decided on the stored history, so the steers a turn took count and are summarised", async () => {
    // No compaction model: the offline summariser, which keeps the identifiers of what it summarises.
    const e = await open((await oneToolCallModel()).runtime, {
      compaction: { maxMessages: 5, keepRecent: 2 },
    });
    await e.turnWith(dm("First question about the trip."), async () => "First answer.");
    const held = heldTool();
    const a = e.turn(dm("Look up the booking."), { tools: held.tools });
    await held.reached;
    const b = await queued(e, "Also check order 777123 for me.");
    const c = await queued(e, "And the invoice INV-4242 please.");
    held.release();
    await Promise.all([a, b.settled, c.settled]);
    await e.idle(KEY);
    // Six messages with the two steers (over 5); the turn's own context held four.
    const history = await e.history(KEY);
    const compactions = history.filter((entry) => entry.type === "compaction");
    expect(compactions).toHaveLength(1);
    const steer = history.find((entry) => entry.type === "message" && entry.content.includes("777123"));
    const compaction = compactions[0] as Extract<Entry, { type: "compaction" }>;
    expect(compaction.summary).toContain("777123");
    expect(compaction.throughSeq).toBeGreaterThanOrEqual(steer?.seq ?? Number.POSITIVE_INFINITY);
  });
});
