import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OpenAiServer, startOpenAiServer } from "../../support/openai-server.js";
import { startTestGateway, type TestGateway, TOKEN } from "./helpers.js";

const KEY_ENV = "SESSIOND_TEST_GATEWAY_OPENAI_KEY";
let upstream: OpenAiServer;
let gw: TestGateway;
let client: OpenAI;

beforeAll(async () => {
  process.env[KEY_ENV] = "sk-upstream-secret";
  upstream = await startOpenAiServer();
  gw = await startTestGateway({
    agents: ["main", "helper"],
    models: {
      upstream: { provider: "openai", baseUrl: upstream.baseUrl, model: "test-model", apiKeyEnv: KEY_ENV },
    },
    agentOptions: { main: { model: "upstream" } },
  });
  client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: TOKEN, maxRetries: 0 });
});
afterAll(async () => {
  await gw.stop();
  await upstream.close();
  delete process.env[KEY_ENV];
});

describe("OpenAI-compatible API", () => {
  it("lists the agents as models", async () => {
    const models = await client.models.list();
    expect(models.data.map((m) => m.id)).toEqual(["main", "helper"]);
  });

  it("answers a non-streaming completion through the agent's model", async () => {
    const completion = await client.chat.completions.create({
      model: "main",
      messages: [{ role: "user", content: "first question" }],
    });
    expect(completion.object).toBe("chat.completion");
    expect(completion.choices[0]?.message.content).toBe("echo: first question");
    const key = "openai-compat:127.0.0.1";
    const session = await (await gw.api(`/api/sessions/${encodeURIComponent(key)}`)).json();
    expect(session.session.key).toBe(key);
  });

  it("streams a completion, the stored history being authoritative", async () => {
    const stream = await client.chat.completions.create({
      model: "main",
      stream: true,
      // The client's copy continues the stored conversation; the model is sent the stored one.
      messages: [
        { role: "system", content: "a system message the gateway never stored" },
        { role: "user", content: "first question" },
        { role: "assistant", content: "echo: first question" },
        { role: "user", content: "second question" },
      ],
    });
    let text = "";
    let finish: string | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? "";
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(text).toBe("echo: second question");
    expect(finish).toBe("stop");
    const sent = upstream.chatRequests().at(-1);
    const contents = sent?.messages.map((m) => m.content);
    expect(contents).toContain("first question");
    expect(contents).toContain("echo: first question");
    expect(contents).not.toContain("a system message the gateway never stored");
    expect(contents?.at(-1)).toBe("second question");
  });

  it("rejects unknown models and bad requests with the error shape", async () => {
    await expect(
      client.chat.completions.create({ model: "gpt-nothing", messages: [{ role: "user", content: "x" }] }),
    ).rejects.toMatchObject({ status: 404 });
    await expect(client.chat.completions.create({ model: "main", messages: [] })).rejects.toMatchObject({
      status: 400,
    });
    const res = await gw.api("/v1/chat/completions", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{",
    });
    expect(res.status).toBe(400);
    expect((await res.json()).error.code).toBe("INVALID_JSON");
  });

  it("rejects a wrong token", async () => {
    const wrong = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: "nope", maxRetries: 0 });
    await expect(wrong.models.list()).rejects.toMatchObject({ status: 401 });
  });

  it("ignores X-Forwarded-For unless a proxy header is configured", async () => {
    const res = await gw.api("/v1/chat/completions", {
      method: "POST",
      headers: { "content-type": "application/json", "x-forwarded-for": "203.0.113.9" },
      body: JSON.stringify({ model: "helper", messages: [{ role: "user", content: "spoof" }] }),
    });
    expect(res.status).toBe(200);
    expect((await gw.api(`/api/sessions/${encodeURIComponent("openai-compat:203.0.113.9")}`)).status).toBe(
      404,
    );
  });
});

describe("behind a trusted proxy", () => {
  it("takes the client IP from the configured header", async () => {
    const proxied = await startTestGateway({}, { trustProxyHeader: "X-Forwarded-For" });
    try {
      const res = await proxied.api("/v1/chat/completions", {
        method: "POST",
        headers: { "content-type": "application/json", "x-forwarded-for": "203.0.113.9, 10.0.0.1" },
        body: JSON.stringify({ messages: [{ role: "user", content: "hi" }] }),
      });
      expect(res.status).toBe(200);
      const session = await proxied.api(`/api/sessions/${encodeURIComponent("openai-compat:203.0.113.9")}`);
      expect(session.status).toBe(200);
    } finally {
      await proxied.stop();
    }
  });
});
