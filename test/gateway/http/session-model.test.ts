import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AnthropicServer, startAnthropicServer } from "../../support/anthropic-server.js";
import { type OpenAiServer, startOpenAiServer } from "../../support/openai-server.js";
import { postJson, startTestGateway, type TestGateway } from "./helpers.js";

let upstream: OpenAiServer;
let gw: TestGateway;

beforeAll(async () => {
  // One upstream, two configured models: the reply names the model it was asked for.
  upstream = await startOpenAiServer((body) => ({ content: `answered by ${body.model}` }));
  gw = await startTestGateway({
    models: {
      fast: { provider: "openai", baseUrl: upstream.baseUrl, model: "fast-1" },
      deep: { provider: "openai", baseUrl: upstream.baseUrl, model: "deep-1" },
    },
    agentOptions: { main: { model: "fast" } },
  });
});
afterAll(async () => {
  await gw.stop();
  await upstream.close();
});

const say = async (session: string, message: string) =>
  (await (await gw.api("/api/chat", postJson({ message, session_id: session }))).json()).reply;

describe("a session's own model", () => {
  it("is used by the gateway's turns in place of the agent's", async () => {
    expect(await say("admin-m1", "hi")).toBe("answered by fast-1");
    await gw.engine.overrides.set("admin-m1", { model: "deep" });
    expect(await say("admin-m1", "again")).toBe("answered by deep-1");
    // Other sessions of the agent keep the agent's model.
    expect(await say("admin-m2", "hi")).toBe("answered by fast-1");
    await gw.engine.overrides.unset("admin-m1", ["model"]);
    expect(await say("admin-m1", "back")).toBe("answered by fast-1");
  });

  it("is refused when not configured, with the list of what is", async () => {
    await say("admin-m3", "hi");
    await expect(gw.engine.overrides.set("admin-m3", { model: "gpt-nowhere" })).rejects.toMatchObject({
      code: "INVALID_ARGUMENT",
      message: 'model "gpt-nowhere" is not configured; configured models: fast, deep',
    });
    await expect(gw.engine.overrides.set("admin-m3", { provider: "mistral" })).rejects.toMatchObject({
      code: "INVALID_ARGUMENT",
      message: 'provider "mistral" is not configured; configured providers: openai',
    });
    expect((await gw.engine.sessions.get("admin-m3"))?.overrides).toEqual({});
  });
});

describe("a session's own model or provider, everywhere", () => {
  let openai: OpenAiServer;
  let anthropic: AnthropicServer;
  let gw2: TestGateway;
  const lastText = (messages: Array<{ content?: unknown }>) => String(messages.at(-1)?.content ?? "");

  beforeAll(async () => {
    // Titles, summaries and turns answer differently, each naming the model asked.
    openai = await startOpenAiServer((body) => {
      const text = lastText(body.messages);
      if (text.includes("Title (3 to 6 words)")) return { content: "Planning the garden party" };
      if (body.messages.some((m) => m.role === "system" && /summar/i.test(String(m.content)))) {
        return { content: `The user and the agent talked about the garden party (by ${body.model}).` };
      }
      return { content: `answered by ${body.model}` };
    });
    anthropic = await startAnthropicServer((body) => ({ content: `answered by ${body.model}` }));
    gw2 = await startTestGateway({
      models: {
        fast: { provider: "openai", baseUrl: openai.baseUrl, model: "fastmodel" },
        deep: { provider: "openai", baseUrl: openai.baseUrl, model: "deepmodel" },
        claude: {
          provider: "anthropic",
          baseUrl: anthropic.baseUrl,
          model: "claudemodel",
          apiKeyEnv: "PATH",
        },
      },
      agentOptions: { main: { model: "fast" } },
      compaction: { model: "fast" },
      titles: { enabled: true, model: "fast" },
    });
  });
  afterAll(async () => {
    await gw2.stop();
    await openai.close();
    await anthropic.close();
  });

  const chat = async (session: string, message: string) =>
    (await (await gw2.api("/api/chat", postJson({ message, session_id: session }))).json()).reply;
  const titled = (key: string) =>
    new Promise<string | undefined>((resolve) => {
      const off = gw2.engine.events.on((event) => {
        if (event.type !== "appended" || event.key !== key) return;
        const title = event.entries.find((e) => e.type === "title");
        if (title?.type === "title") {
          off();
          resolve(title.by);
        }
      });
    });

  it("a provider override picks that provider's configured model for the session's turns", async () => {
    await gw2.engine.append("admin-p1", [{ type: "message", role: "user", content: "first" }]);
    await gw2.engine.overrides.set("admin-p1", { provider: "anthropic" });
    expect(await chat("admin-p1", "hello")).toBe("answered by claudemodel");
    // The turn's request, and the title's when it has been sent by now: both on the session's model.
    const models = anthropic.messageRequests().map((r) => r.model);
    expect(models[0]).toBe("claudemodel");
    expect(new Set(models)).toEqual(new Set(["claudemodel"]));
    expect(await chat("admin-p2", "hello")).toBe("answered by fastmodel");
    // The agent's model when it already is of that provider.
    await gw2.engine.overrides.set("admin-p1", { provider: "openai" });
    expect(await chat("admin-p1", "again")).toBe("answered by fastmodel");
  });

  it("titles and compaction use the session's model, not titles.model and compaction.model", async () => {
    await gw2.engine.append("admin-p3", [{ type: "message", role: "system", content: "garden notes" }]);
    await gw2.engine.overrides.set("admin-p3", { model: "deep" });
    const by = titled("admin-p3");
    expect(await chat("admin-p3", "shall we plan the garden party")).toBe("answered by deepmodel");
    expect(await by).toBe("deepmodel");
    await chat("admin-p3", "who comes to the garden party");
    await chat("admin-p3", "what do we eat at the garden party");
    const { entry } = await gw2.engine.compact("admin-p3");
    expect(entry.summary).toContain("(by deepmodel)");
    expect(entry.model).toBe("deepmodel");
    // A session without an override keeps the configured ones.
    const byFast = titled("admin-p4");
    await chat("admin-p4", "shall we plan the garden party");
    expect(await byFast).toBe("fastmodel");
  });
});
