import { describe, expect, it } from "vitest";
import { isSessiondError } from "../../../src/model/errors.js";
import {
  type ChatStreamEvent,
  createOpenAiClient,
  createTextModel,
  LlmError,
  openAiChatModel,
  streamChat,
} from "../../../src/runtimes/llm/index.js";
import { useServer } from "../../support/http-server.js";
import { echoHandler, startOpenAiServer } from "../../support/openai-server.js";

const KEY = "sk-test-SECRET-0123456789abcdef";

const server = useServer(
  () => startOpenAiServer(),
  (s) => s.setHandler(echoHandler),
);

async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected a rejection");
}

function everythingAbout(error: unknown): string {
  const e = error as Error & Record<string, unknown>;
  return [String(e), e.message, e.stack, JSON.stringify(e), String(e.cause ?? "")].join("\n");
}

describe("openAiChatModel", () => {
  it("sends model, system + user messages, temperature and max_tokens with the key as bearer", async () => {
    server.setHandler(() => ({
      content: "hello there",
      model: "served-model",
      usage: { promptTokens: 11, completionTokens: 3 },
    }));
    const model = openAiChatModel({
      baseUrl: server.baseUrl,
      model: "gpt-test",
      apiKey: KEY,
      contextWindow: 8192,
    });
    const completion = await model.complete({
      system: "be brief",
      user: "hi",
      maxTokens: 77,
      temperature: 0.2,
    });

    expect(completion).toEqual({
      text: "hello there",
      model: "served-model",
      inputTokens: 11,
      outputTokens: 3,
    });
    expect(model.provider).toBe("openai");
    expect(model.model).toBe("gpt-test");
    expect(model.contextWindow).toBe(8192);
    const [request] = server.requests;
    expect(request?.method).toBe("POST");
    expect(request?.path).toBe("/v1/chat/completions");
    expect(request?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(request?.body).toMatchObject({
      model: "gpt-test",
      messages: [
        { role: "system", content: "be brief" },
        { role: "user", content: "hi" },
      ],
      temperature: 0.2,
      max_tokens: 77,
    });
    expect(server.chatRequests()[0]?.stream).toBeFalsy();
  });

  it("reads the key from the variable apiKeyEnv names, and refuses a missing variable by name only", async () => {
    process.env.SESSIOND_TEST_LLM_KEY = KEY;
    try {
      const model = openAiChatModel({
        baseUrl: server.baseUrl,
        model: "m",
        apiKeyEnv: "SESSIOND_TEST_LLM_KEY",
      });
      await model.complete({ system: "s", user: "u", maxTokens: 10 });
      expect(server.requests[0]?.headers.authorization).toBe(`Bearer ${KEY}`);
    } finally {
      delete process.env.SESSIOND_TEST_LLM_KEY;
    }
    const error = await failure(
      Promise.resolve().then(() =>
        openAiChatModel({ baseUrl: server.baseUrl, model: "m", apiKeyEnv: "SESSIOND_TEST_LLM_KEY" }),
      ),
    );
    expect(isSessiondError(error, "INVALID_ARGUMENT")).toBe(true);
    expect((error as Error).message).toContain("SESSIOND_TEST_LLM_KEY");
  });

  it("sends no Authorization header without a key (local servers), and ignores OPENAI_API_KEY", async () => {
    const previous = process.env.OPENAI_API_KEY;
    process.env.OPENAI_API_KEY = "sk-ambient-should-not-leak";
    try {
      const model = openAiChatModel({ baseUrl: server.baseUrl, model: "llama3" });
      const completion = await model.complete({ system: "s", user: "ping", maxTokens: 10 });
      expect(completion.text).toBe("echo: ping");
      expect(server.requests[0]?.headers.authorization).toBeUndefined();
    } finally {
      if (previous === undefined) delete process.env.OPENAI_API_KEY;
      else process.env.OPENAI_API_KEY = previous;
    }
  });

  it("never puts the key in the error when a 401 echoes the Authorization header", async () => {
    server.setHandler((_body, request) => ({
      status: 401,
      body: {
        error: {
          message: `Incorrect API key provided: ${request.headers.authorization}; raw key ${KEY}`,
          type: "invalid_request_error",
        },
      },
    }));
    const model = openAiChatModel({ baseUrl: server.baseUrl, model: "m", apiKey: KEY, maxRetries: 0 });
    const error = await failure(model.complete({ system: "s", user: "u", maxTokens: 10 }));

    expect(error).toBeInstanceOf(LlmError);
    expect(error).toMatchObject({ kind: "auth", status: 401, provider: "openai", retryable: false });
    expect((error as Error).message).toContain("Incorrect API key provided");
    expect(everythingAbout(error)).not.toContain(KEY);
    expect(everythingAbout(error)).not.toContain("SECRET-0123");
  });

  it("retries server errors up to maxRetries and then reports a retryable failure", async () => {
    server.setHandler(() => ({
      status: 503,
      body: { error: { message: "overloaded", type: "server_error" } },
    }));
    const model = openAiChatModel({ baseUrl: server.baseUrl, model: "m", apiKey: KEY, maxRetries: 1 });
    const error = await failure(model.complete({ system: "s", user: "u", maxTokens: 10 }));
    expect(error).toMatchObject({ kind: "server", status: 503, retryable: true });
    expect(server.requests).toHaveLength(2);
  });

  it("gives up after timeoutMs", async () => {
    server.setHandler(() => ({ content: "late", delayMs: 5_000 }));
    const model = openAiChatModel({
      baseUrl: server.baseUrl,
      model: "m",
      apiKey: KEY,
      timeoutMs: 200,
      maxRetries: 0,
    });
    const error = await failure(model.complete({ system: "s", user: "u", maxTokens: 10 }));
    expect(error).toMatchObject({ kind: "timeout", retryable: true });
  });

  it("stops when the caller's signal aborts", async () => {
    server.setHandler(() => ({ content: "late", delayMs: 5_000 }));
    const model = openAiChatModel({ baseUrl: server.baseUrl, model: "m", apiKey: KEY, maxRetries: 0 });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const error = await failure(
      model.complete({ system: "s", user: "u", maxTokens: 10, signal: controller.signal }),
    );
    expect(error).toMatchObject({ kind: "aborted", retryable: false });
  });

  it("refuses configs no request could succeed with", () => {
    const bad = [
      { baseUrl: "not a url", model: "m" },
      { baseUrl: "ftp://example.com", model: "m" },
      { baseUrl: server.baseUrl, model: "" },
      { baseUrl: server.baseUrl, model: "m", timeoutMs: 0 },
      { baseUrl: server.baseUrl, model: "m", maxRetries: -1 },
      { baseUrl: server.baseUrl, model: "m", contextWindow: 1.5 },
      { baseUrl: server.baseUrl, model: "m", apiKey: "" },
    ];
    for (const config of bad) {
      let caught: unknown;
      try {
        openAiChatModel(config);
      } catch (error) {
        caught = error;
      }
      expect(isSessiondError(caught, "INVALID_ARGUMENT"), JSON.stringify(config)).toBe(true);
    }
  });
});

describe("createTextModel", () => {
  it("builds the configured provider and refuses an unknown one", async () => {
    const model = createTextModel({ provider: "openai", baseUrl: server.baseUrl, model: "m", apiKey: KEY });
    expect(model.provider).toBe("openai");
    expect((await model.complete({ system: "s", user: "x", maxTokens: 5 })).text).toBe("echo: x");
    const anthropic = createTextModel({ provider: "anthropic", model: "claude-x", apiKey: KEY });
    expect(anthropic.provider).toBe("anthropic");
    let caught: unknown;
    try {
      createTextModel({ provider: "gemini", model: "m" } as unknown as Parameters<typeof createTextModel>[0]);
    } catch (error) {
      caught = error;
    }
    expect(isSessiondError(caught, "INVALID_ARGUMENT")).toBe(true);
  });
});

async function collect(stream: AsyncIterable<ChatStreamEvent>) {
  const deltas: string[] = [];
  const done: Extract<ChatStreamEvent, { type: "done" }>["result"][] = [];
  for await (const event of stream) {
    if (event.type === "text") deltas.push(event.delta);
    else done.push(event.result);
  }
  return { deltas, done };
}

describe("streamChat", () => {
  it("yields each text delta and then the whole text with usage", async () => {
    server.setHandler(() => ({
      chunks: ["Hel", "lo, ", "world"],
      content: "Hello, world",
      usage: { promptTokens: 21, completionTokens: 4 },
      model: "served",
    }));
    const client = createOpenAiClient({ baseUrl: server.baseUrl, model: "m", apiKey: KEY });
    const { deltas, done } = await collect(
      streamChat(client, { model: "m", messages: [{ role: "user", content: "greet" }], maxTokens: 50 }),
    );
    expect(deltas).toEqual(["Hel", "lo, ", "world"]);
    expect(done).toEqual([
      {
        text: "Hello, world",
        model: "served",
        finishReason: "stop",
        toolCalls: [],
        usage: { inputTokens: 21, outputTokens: 4 },
      },
    ]);
    expect(server.chatRequests()[0]).toMatchObject({
      model: "m",
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 50,
    });
  });

  it("assembles tool calls from their deltas and sends the tools", async () => {
    server.setHandler(() => ({
      content: "",
      toolCalls: [
        { id: "call_a", name: "get_weather", arguments: '{"city":"Lisbon","unit":"C"}' },
        { id: "call_b", name: "get_time", arguments: '{"tz":"Europe/Lisbon"}' },
      ],
    }));
    const client = createOpenAiClient({ baseUrl: server.baseUrl, model: "m", apiKey: KEY });
    const tools = [
      {
        type: "function" as const,
        function: {
          name: "get_weather",
          parameters: { type: "object", properties: { city: { type: "string" } } },
        },
      },
    ];
    const { deltas, done } = await collect(
      streamChat(client, { model: "m", messages: [{ role: "user", content: "weather?" }], tools }),
    );
    expect(deltas).toEqual([]);
    expect(done[0]?.finishReason).toBe("tool_calls");
    expect(done[0]?.toolCalls).toEqual([
      { id: "call_a", name: "get_weather", arguments: '{"city":"Lisbon","unit":"C"}' },
      { id: "call_b", name: "get_time", arguments: '{"tz":"Europe/Lisbon"}' },
    ]);
    expect(server.chatRequests()[0]?.tools).toEqual(tools);
  });

  it("reports no usage when the server sends none", async () => {
    server.setHandler(() => ({ content: "a b", usage: null }));
    const client = createOpenAiClient({ baseUrl: server.baseUrl, model: "m" });
    const { done } = await collect(
      streamChat(client, { model: "m", messages: [{ role: "user", content: "x" }] }),
    );
    expect(done[0]?.text).toBe("a b");
    expect(done[0]?.usage).toBeUndefined();
  });

  it("throws a scrubbed LlmError on an error status and on a dropped stream", async () => {
    server.setHandler((_b, request) => ({
      status: 401,
      body: { error: { message: `bad key ${request.headers.authorization}` } },
    }));
    const client = createOpenAiClient({ baseUrl: server.baseUrl, model: "m", apiKey: KEY, maxRetries: 0 });
    const error = await failure(
      collect(streamChat(client, { model: "m", messages: [{ role: "user", content: "x" }] })),
    );
    expect(error).toMatchObject({ kind: "auth", status: 401 });
    expect(everythingAbout(error)).not.toContain(KEY);

    server.setHandler(() => ({ chunks: ["one ", "two ", "three"], dropAfterChunks: 2 }));
    const dropped = await failure(
      collect(streamChat(client, { model: "m", messages: [{ role: "user", content: "x" }] })),
    );
    expect(dropped).toBeInstanceOf(LlmError);
  });

  it("aborts mid-stream on the caller's signal", async () => {
    server.setHandler(() => ({ chunks: ["a ", "b ", "c ", "d "], chunkDelayMs: 300 }));
    const client = createOpenAiClient({ baseUrl: server.baseUrl, model: "m", maxRetries: 0 });
    const controller = new AbortController();
    const deltas: string[] = [];
    const error = await failure(
      (async () => {
        for await (const event of streamChat(client, {
          model: "m",
          messages: [{ role: "user", content: "x" }],
          signal: controller.signal,
        })) {
          if (event.type === "text") {
            deltas.push(event.delta);
            controller.abort();
          }
        }
      })(),
    );
    expect(error).toMatchObject({ kind: "aborted" });
    expect(deltas).toEqual(["a "]);
  });
});

describe("the local OpenAI server", () => {
  it("answers non-streaming tool calls and lists models for the real client", async () => {
    server.setHandler(() => ({ toolCalls: [{ id: "call_1", name: "lookup", arguments: '{"id":42}' }] }));
    const { client } = await createOpenAiClient({ baseUrl: server.baseUrl, model: "m", apiKey: KEY }).load();
    const response = await client.chat.completions.create({
      model: "m",
      messages: [{ role: "user", content: "x" }],
    });
    const call = response.choices[0]?.message.tool_calls?.[0];
    expect(response.choices[0]?.finish_reason).toBe("tool_calls");
    expect(call?.type === "function" ? [call.id, call.function.name, call.function.arguments] : []).toEqual([
      "call_1",
      "lookup",
      '{"id":42}',
    ]);
    const models = await client.models.list();
    expect(models.data.map((m) => m.id)).toEqual(["test-model"]);
    expect(server.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      "POST /v1/chat/completions",
      "GET /v1/models",
    ]);
  });
});
