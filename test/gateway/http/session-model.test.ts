import { afterAll, beforeAll, describe, expect, it } from "vitest";
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
