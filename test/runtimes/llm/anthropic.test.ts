import { describe, expect, it } from "vitest";
import { isSessiondError } from "../../../src/model/errors.js";
import { anthropicModel, LlmError } from "../../../src/runtimes/llm/index.js";
import { startAnthropicServer } from "../../support/anthropic-server.js";
import { useServer } from "../../support/http-server.js";

const KEY = "sk-ant-test-SECRET-abcdef0123456789";

const server = useServer(startAnthropicServer, (s) => s.setHandler(() => ({ content: "ok" })));

async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected a rejection");
}

describe("anthropicModel", () => {
  it("sends model, max_tokens, system, one user message and temperature; returns text and usage", async () => {
    server.setHandler(() => ({
      content: "a short summary",
      model: "claude-served",
      usage: { inputTokens: 120, outputTokens: 9 },
    }));
    const model = anthropicModel({
      baseUrl: server.baseUrl,
      model: "claude-test",
      apiKey: KEY,
      contextWindow: 200_000,
    });
    const completion = await model.complete({
      system: "summarise",
      user: "USER: hi",
      maxTokens: 300,
      temperature: 0.2,
    });

    expect(completion).toEqual({
      text: "a short summary",
      model: "claude-served",
      inputTokens: 120,
      outputTokens: 9,
    });
    expect(model).toMatchObject({ provider: "anthropic", model: "claude-test", contextWindow: 200_000 });
    const [request] = server.requests;
    expect(`${request?.method} ${request?.path}`).toBe("POST /v1/messages");
    expect(request?.body).toEqual({
      model: "claude-test",
      max_tokens: 300,
      system: "summarise",
      messages: [{ role: "user", content: "USER: hi" }],
      temperature: 0.2,
    });
    const auth = `${request?.headers["x-api-key"] ?? ""} ${request?.headers.authorization ?? ""}`;
    expect(auth).toContain(KEY);
  });

  it("scrubs the key from a 401 that echoes it, and reports auth", async () => {
    server.setHandler((_body, request) => ({
      status: 401,
      body: {
        type: "error",
        error: {
          type: "authentication_error",
          message: `invalid x-api-key ${String(request.headers["x-api-key"] ?? request.headers.authorization)}`,
        },
      },
    }));
    const model = anthropicModel({
      baseUrl: server.baseUrl,
      model: "claude-test",
      apiKey: KEY,
      maxRetries: 0,
    });
    const error = await failure(model.complete({ system: "s", user: "u", maxTokens: 10 }));
    expect(error).toBeInstanceOf(LlmError);
    expect(error).toMatchObject({ kind: "auth", status: 401, provider: "anthropic" });
    expect((error as Error).message).toContain("invalid x-api-key");
    expect(`${String(error)} ${(error as Error).stack} ${JSON.stringify(error)}`).not.toContain(KEY);
  });

  it("times out after timeoutMs", async () => {
    server.setHandler(() => ({ content: "late", delayMs: 5_000 }));
    const model = anthropicModel({
      baseUrl: server.baseUrl,
      model: "claude-test",
      apiKey: KEY,
      timeoutMs: 200,
      maxRetries: 0,
    });
    const error = await failure(model.complete({ system: "s", user: "u", maxTokens: 10 }));
    expect(error).toMatchObject({ kind: "timeout" });
  });

  it("needs a key: apiKey, the apiKeyEnv variable, or ANTHROPIC_API_KEY", async () => {
    const previous = process.env.ANTHROPIC_API_KEY;
    delete process.env.ANTHROPIC_API_KEY;
    try {
      let caught: unknown;
      try {
        anthropicModel({ baseUrl: server.baseUrl, model: "claude-test" });
      } catch (error) {
        caught = error;
      }
      expect(isSessiondError(caught, "INVALID_ARGUMENT")).toBe(true);

      process.env.ANTHROPIC_API_KEY = KEY;
      await anthropicModel({ baseUrl: server.baseUrl, model: "claude-test" }).complete({
        system: "s",
        user: "u",
        maxTokens: 5,
      });
      const headers = server.requests[0]?.headers;
      expect(`${headers?.["x-api-key"] ?? ""} ${headers?.authorization ?? ""}`).toContain(KEY);
    } finally {
      if (previous === undefined) delete process.env.ANTHROPIC_API_KEY;
      else process.env.ANTHROPIC_API_KEY = previous;
    }
  });
});
