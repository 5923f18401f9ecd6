import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  createEngine,
  type Engine,
  type EngineConfig,
  type Entry,
  type Envelope,
  isSessiondError,
} from "../../src/index.js";
import type { RuntimeEvent } from "../../src/model/runtime.js";
import { anthropicMessages, describeRuntime, modelRuntime, runnerFor } from "../../src/runtimes/index.js";
import { startAnthropicServer } from "../support/anthropic-server.js";
import { type LocalServer, startLocalServer, useServer } from "../support/http-server.js";
import { type OpenAiServer, startOpenAiServer } from "../support/openai-server.js";

const KEY = "sk-test-SECRET-0123456789abcdef";
const KEY_PREFIX = "SECRET-0123456789";

const dm = (text: string): Envelope => ({
  channel: "telegram",
  chat: { type: "direct", id: "42" },
  sender: { id: "42" },
  text,
});

const messagesOf = (history: Entry[]) =>
  history.filter((e) => e.type === "message").map((e) => `${e.role}:${e.content}`);

async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected a rejection");
}

/** Every message along an error's cause chain. */
function messagesAlong(error: unknown): string[] {
  const out: string[] = [];
  let current: unknown = error;
  while (current instanceof Error) {
    out.push(current.message);
    current = current.cause;
  }
  return out;
}

let dataDir: string;
let engine: Engine;

async function openEngine(config: EngineConfig = {}): Promise<void> {
  await engine?.close();
  engine = await createEngine({
    dataDir,
    titles: { enabled: false },
    lifecycle: { sweepIntervalMs: 0 },
    ...config,
  });
}

beforeEach(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "sessiond-model-"));
  await openEngine();
});

afterEach(async () => {
  await engine.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe("model runtime, OpenAI-compatible", () => {
  let server: OpenAiServer;
  const openai = (extra: Partial<Parameters<typeof modelRuntime>[0]> = {}) =>
    modelRuntime({ provider: "openai", baseUrl: server.baseUrl, model: "test-model", apiKey: KEY, ...extra });

  beforeAll(async () => {
    server = await startOpenAiServer();
  });
  afterAll(async () => {
    await server.close();
  });
  afterEach(() => {
    server.requests.length = 0;
  });

  it("streams deltas to onEvent as they arrive, stores the whole reply and the usage", async () => {
    server.setHandler(() => ({
      content: "Hello, world",
      chunks: ["Hel", "lo, ", "wor", "ld"],
      chunkDelayMs: 80,
      usage: { promptTokens: 11, completionTokens: 4 },
    }));
    const deltas: Array<{ delta: string; at: number }> = [];
    const types: string[] = [];
    const runner = runnerFor(openai({ temperature: 0.3, maxTokens: 200 }), {
      onEvent: (event) => {
        types.push(event.type);
        if (event.type === "text") deltas.push({ delta: event.delta, at: Date.now() });
      },
    });
    const result = await engine.turnWith(dm("hi"), runner);

    expect(deltas.map((d) => d.delta)).toEqual(["Hel", "lo, ", "wor", "ld"]);
    // Forwarded while the server was still sending (it waits 80 ms before each chunk), not all at the end.
    expect(deltas.at(-1)!.at - deltas[0]!.at).toBeGreaterThanOrEqual(150);
    expect(types.at(-1)).toBe("usage");
    expect(result.reply).toMatchObject({ role: "assistant", content: "Hello, world" });
    const history = await engine.history("telegram:42");
    expect(history.map((e) => e.type)).toEqual(["message", "message", "usage"]);
    expect(history[2]).toMatchObject({
      type: "usage",
      model: "test-model",
      inputTokens: 11,
      outputTokens: 4,
    });

    const [request] = server.chatRequests();
    expect(request).toMatchObject({
      model: "test-model",
      stream: true,
      temperature: 0.3,
      max_tokens: 200,
      messages: [{ role: "user", content: "hi" }],
    });
    expect(server.requests[0]?.headers.authorization).toBe(`Bearer ${KEY}`);
  });

  it("sends the assembled context: instructions as system, then the history, the input last", async () => {
    await openEngine({ agentOptions: { main: { instructions: "Be brief." } } });
    server.setHandler(() => ({ content: "one" }));
    await engine.turnWith(dm("first"), runnerFor(openai()));
    server.setHandler(() => ({ content: "two" }));
    await engine.turnWith(dm("second"), runnerFor(openai()));
    expect(server.chatRequests()[1]?.messages).toEqual([
      { role: "system", content: "Be brief." },
      { role: "user", content: "first" },
      { role: "assistant", content: "one" },
      { role: "user", content: "second" },
    ]);
    expect(messagesOf(await engine.history("telegram:42"))).toEqual([
      "user:first",
      "assistant:one",
      "user:second",
      "assistant:two",
    ]);
  });

  it("records tool calls through §7: credentials left out of what is stored", async () => {
    server.setHandler(() => ({
      content: "Signing in.",
      toolCalls: [
        { id: "call_a", name: "login", arguments: JSON.stringify({ user: "ann", password: "hunter2" }) },
        { name: "search", arguments: '{"q":"weather"}' },
      ],
    }));
    const calls: RuntimeEvent[] = [];
    const runner = runnerFor(openai(), {
      onEvent: (event) => {
        if (event.type === "tool_call") calls.push(event);
      },
    });
    const result = await engine.turnWith(dm("log me in"), runner);

    expect(calls.map((c) => (c.type === "tool_call" ? c.name : ""))).toEqual(["login", "search"]);
    expect(result.reply?.toolCalls).toEqual([
      { id: "call_a", name: "login", arguments: { user: "ann" } },
      { id: "call_1", name: "search", arguments: { q: "weather" } },
    ]);
    const history = await engine.history("telegram:42");
    expect(history.find((e) => e.type === "message" && e.role === "assistant")).toMatchObject({
      content: "Signing in.",
      toolCalls: [{ name: "login" }, { name: "search" }],
    });
    expect(JSON.stringify(history)).not.toContain("hunter2");
  });

  it("an abort mid-stream cancels the turn: TURN_CANCELLED, a note, no reply stored", async () => {
    const chunks = Array.from({ length: 10 }, (_, i) => `part${i} `);
    server.setHandler(() => ({ content: chunks.join(""), chunks, chunkDelayMs: 40 }));
    const controller = new AbortController();
    const deltas: string[] = [];
    const runner = runnerFor(openai(), {
      onEvent: (event) => {
        if (event.type !== "text") return;
        deltas.push(event.delta);
        if (deltas.length === 2) controller.abort();
      },
    });
    const error = await failure(
      engine.turnWith(dm("tell me a story"), runner, { signal: controller.signal }),
    );

    expect(isSessiondError(error, "TURN_CANCELLED")).toBe(true);
    expect(deltas).toEqual(["part0 ", "part1 "]);
    const history = await engine.history("telegram:42");
    expect(messagesOf(history)).toEqual(["user:tell me a story"]);
    expect(history.map((e) => e.type)).toEqual(["message", "note"]);
    expect(history[1]).toMatchObject({ type: "note", code: "TURN_CANCELLED" });
  });

  it("a 500 fails the turn with a note, and the key is in no message even when the server echoes it", async () => {
    server.setHandler((_body, request) => ({
      status: 500,
      body: { error: { message: `upstream broke (auth ${request.headers.authorization})`, type: "server" } },
    }));
    const error = await failure(engine.turnWith(dm("hi"), runnerFor(openai({ maxRetries: 0 }))));

    expect(isSessiondError(error, "TURN_FAILED")).toBe(true);
    expect(server.requests[0]?.headers.authorization).toContain(KEY);
    const messages = messagesAlong(error);
    expect(messages[0]).toContain("upstream broke");
    for (const message of messages) expect(message).not.toContain(KEY_PREFIX);
    const history = await engine.history("telegram:42");
    expect(messagesOf(history)).toEqual(["user:hi"]);
    const note = history.find((e) => e.type === "note");
    expect(note).toMatchObject({ code: "TURN_FAILED", level: "error" });
    expect(JSON.stringify(history)).not.toContain(KEY_PREFIX);
  });

  it("describes itself with provider, model and endpoint", () => {
    const runtime = openai({ contextWindow: 128_000 });
    expect(runtime.kind).toBe("model");
    expect(describeRuntime(runtime)).toBe(
      `model (openai test-model at ${server.baseUrl}, context window 128,000 tokens)`,
    );
  });
});

describe("model runtime, Anthropic", () => {
  const server = useServer(startAnthropicServer);

  const anthropic = (extra: Partial<Parameters<typeof modelRuntime>[0]> = {}) =>
    modelRuntime({
      provider: "anthropic",
      baseUrl: server.baseUrl,
      model: "claude-test",
      apiKey: KEY,
      stream: false,
      ...extra,
    });

  it("non-streaming: system prompt from the system messages, reply and usage stored", async () => {
    await openEngine({ agentOptions: { main: { instructions: "Be brief." } } });
    server.setHandler(() => ({
      content: "Hi there.",
      model: "claude-served",
      usage: { inputTokens: 9, outputTokens: 3 },
    }));
    const deltas: string[] = [];
    const runner = runnerFor(anthropic({ temperature: 0.5 }), {
      onEvent: (event) => {
        if (event.type === "text") deltas.push(event.delta);
      },
    });
    const result = await engine.turnWith(dm("hello"), runner);

    expect(deltas).toEqual(["Hi there."]);
    expect(result.reply?.content).toBe("Hi there.");
    expect(server.messageRequests()[0]).toEqual({
      model: "claude-test",
      max_tokens: 4096,
      system: "Be brief.",
      messages: [{ role: "user", content: "hello" }],
      temperature: 0.5,
    });
    const { headers } = server.requests[0]!;
    expect(`${headers["x-api-key"] ?? ""} ${headers.authorization ?? ""}`).toContain(KEY);
    const history = await engine.history("telegram:42");
    expect(history.at(-1)).toMatchObject({
      type: "usage",
      model: "claude-served",
      inputTokens: 9,
      outputTokens: 3,
    });
  });

  it("a 401 echoing the key fails the turn with the key scrubbed", async () => {
    server.setHandler((_body, request) => ({
      status: 401,
      body: {
        type: "error",
        error: {
          type: "authentication_error",
          message: `bad key ${String(request.headers["x-api-key"] ?? request.headers.authorization)}`,
        },
      },
    }));
    const error = await failure(engine.turnWith(dm("hello"), runnerFor(anthropic({ maxRetries: 0 }))));

    expect(isSessiondError(error, "TURN_FAILED")).toBe(true);
    expect(messagesAlong(error)[0]).toContain("bad key");
    for (const message of messagesAlong(error)) expect(message).not.toContain(KEY_PREFIX);
    const history = await engine.history("telegram:42");
    expect(messagesOf(history)).toEqual(["user:hello"]);
    expect(history.at(-1)).toMatchObject({ type: "note", code: "TURN_FAILED" });
    expect(JSON.stringify(history)).not.toContain(KEY_PREFIX);
  });
});

/** Anthropic's `POST /v1/messages` with `stream: true`, as server-sent events; the support server only answers whole. */
async function startAnthropicStreamServer(events: () => Array<Record<string, unknown>>, delayMs = 0) {
  return startLocalServer(async (_request, res) => {
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    for (const event of events()) {
      if (delayMs) await new Promise((resolve) => setTimeout(resolve, delayMs));
      if (res.destroyed) return;
      res.write(`event: ${String(event.type)}\ndata: ${JSON.stringify(event)}\n\n`);
    }
    res.end();
  });
}

function anthropicStream(texts: string[], toolJson?: string[]): Array<Record<string, unknown>> {
  const events: Array<Record<string, unknown>> = [
    {
      type: "message_start",
      message: {
        id: "msg_1",
        type: "message",
        role: "assistant",
        model: "claude-streamed",
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 21, output_tokens: 1 },
      },
    },
    { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
    ...texts.map((text) => ({
      type: "content_block_delta",
      index: 0,
      delta: { type: "text_delta", text },
    })),
    { type: "content_block_stop", index: 0 },
  ];
  if (toolJson) {
    events.push(
      {
        type: "content_block_start",
        index: 1,
        content_block: { type: "tool_use", id: "toolu_1", name: "login", input: {} },
      },
      ...toolJson.map((partial_json) => ({
        type: "content_block_delta",
        index: 1,
        delta: { type: "input_json_delta", partial_json },
      })),
      { type: "content_block_stop", index: 1 },
    );
  }
  events.push(
    {
      type: "message_delta",
      delta: { stop_reason: toolJson ? "tool_use" : "end_turn", stop_sequence: null },
      usage: { output_tokens: 7 },
    },
    { type: "message_stop" },
  );
  return events;
}

describe("model runtime, Anthropic streaming", () => {
  let server: LocalServer | undefined;

  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  const streaming = (origin: string) =>
    modelRuntime({ provider: "anthropic", baseUrl: origin, model: "claude-test", apiKey: KEY });

  it("streams text deltas in order; tool calls recorded through §7; usage from start and delta", async () => {
    server = await startAnthropicStreamServer(() =>
      anthropicStream(["Sign", "ing ", "in."], ['{"user":"ann",', '"password":"hunter2"}']),
    );
    const deltas: string[] = [];
    const runner = runnerFor(streaming(server.origin), {
      onEvent: (event) => {
        if (event.type === "text") deltas.push(event.delta);
      },
    });
    const result = await engine.turnWith(dm("log me in"), runner);

    expect(deltas).toEqual(["Sign", "ing ", "in."]);
    expect(result.reply).toMatchObject({
      content: "Signing in.",
      toolCalls: [{ id: "toolu_1", name: "login", arguments: { user: "ann" } }],
    });
    expect(server.requests[0]?.body).toMatchObject({
      stream: true,
      messages: [{ role: "user", content: "log me in" }],
    });
    const history = await engine.history("telegram:42");
    expect(JSON.stringify(history)).not.toContain("hunter2");
    expect(history.at(-1)).toMatchObject({
      type: "usage",
      model: "claude-streamed",
      inputTokens: 21,
      outputTokens: 7,
    });
  });

  it("an abort mid-stream cancels the turn and stores no reply", async () => {
    server = await startAnthropicStreamServer(
      () => anthropicStream(Array.from({ length: 10 }, (_, i) => `w${i} `)),
      40,
    );
    const controller = new AbortController();
    const deltas: string[] = [];
    const runner = runnerFor(streaming(server.origin), {
      onEvent: (event) => {
        if (event.type === "text") deltas.push(event.delta);
        if (deltas.length === 1) controller.abort();
      },
    });
    const error = await failure(engine.turnWith(dm("go"), runner, { signal: controller.signal }));

    expect(isSessiondError(error, "TURN_CANCELLED")).toBe(true);
    expect(deltas).toEqual(["w0 "]);
    const history = await engine.history("telegram:42");
    expect(messagesOf(history)).toEqual(["user:go"]);
    expect(history.at(-1)).toMatchObject({ type: "note", code: "TURN_CANCELLED" });
  });
});

describe("anthropicMessages", () => {
  it("lifts system messages into the system prompt, merges same-role neighbours, opens with a user", () => {
    expect(
      anthropicMessages([
        { role: "system", content: "Be brief." },
        { role: "assistant", content: "Earlier reply." },
        { role: "user", content: "a" },
        { role: "system", content: "[Context] it is Monday" },
        { role: "user", content: "b" },
      ]),
    ).toEqual({
      system: "Be brief.\n\n[Context] it is Monday",
      messages: [
        { role: "user", content: "(continuing the conversation)" },
        { role: "assistant", content: "Earlier reply." },
        { role: "user", content: "a\n\nb" },
      ],
    });
  });
});
