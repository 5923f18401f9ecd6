import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { modelRuntime } from "../../src/runtimes/model.js";
import {
  type AnthropicServer,
  type MessagesRequestBody,
  startAnthropicServer,
} from "../support/anthropic-server.js";
import { json, postJson, startTestGateway, type TestGateway } from "./http/helpers.js";

const SECRET = "SECRET-CARL-7";
let upstream: AnthropicServer;
let gw: TestGateway;

type Block = { type: string; tool_use_id?: string; content?: string; is_error?: boolean; name?: string };

function blocks(body: MessagesRequestBody | undefined, role: string): Block[] {
  return (body?.messages ?? [])
    .filter((m) => m.role === role && Array.isArray(m.content))
    .flatMap((m) => m.content as Block[]);
}

async function chat(sender: string, sessionId: string, message: string) {
  const res = await gw.api("/api/chat", postJson({ message, sender, session_id: sessionId }));
  expect(res.status).toBe(200);
  return json(res);
}

// Both ways the runtime talks to the API: one JSON reply, and the server-sent events it asks for by default.
describe.each([
  { mode: "non-streaming", stream: false },
  { mode: "streaming", stream: true },
])("admin tools through the Anthropic API ($mode)", ({ stream }) => {
  beforeAll(async () => {
    upstream = await startAnthropicServer((body) => ({ content: `heard ${body.messages.length} messages` }));
    const claude = modelRuntime({
      provider: "anthropic",
      baseUrl: upstream.baseUrl,
      model: "claude-test",
      apiKey: "test-key",
      stream,
    });
    gw = await startTestGateway({ admins: ["alice"] }, { runtimes: new Map([["main", claude]]) });
  });
  afterAll(async () => {
    await gw.stop();
    await upstream.close();
  });

  it("asks for the stream it is configured for", async () => {
    const from = upstream.messageRequests().length;
    upstream.setHandler(() => ({ content: "plain reply" }));
    expect((await chat("bob", "admin-bob", "hi")).reply).toBe("plain reply");
    expect(
      upstream
        .messageRequests()
        .slice(from)
        .map((r) => r.stream === true),
    ).toEqual([stream]);
  });

  it("offers the tools to an admin, runs the model's tool_use and returns tool_result blocks", async () => {
    const carl = (await chat("carl", "admin-carl", `my code is ${SECRET}`)).key;
    const from = upstream.messageRequests().length;
    upstream.setHandler((body) =>
      blocks(body, "user").some((b) => b.type === "tool_result")
        ? { content: "read it" }
        : { toolUses: [{ id: "toolu_h", name: "sessions_history", input: { key: carl } }] },
    );
    const result = await chat("alice", "admin-alice", "what did carl say?");
    expect(result.reply).toBe("read it");

    const [first, second, ...rest] = upstream.messageRequests().slice(from);
    expect(rest).toEqual([]);
    expect(((first?.tools ?? []) as Array<{ name: string }>).map((t) => t.name)).toEqual([
      "sessions_list",
      "sessions_history",
      "sessions_search",
    ]);
    expect(blocks(second, "assistant")).toEqual([
      { type: "tool_use", id: "toolu_h", name: "sessions_history", input: { key: carl } },
    ]);
    const [toolResult] = blocks(second, "user").filter((b) => b.type === "tool_result");
    expect(toolResult?.tool_use_id).toBe("toolu_h");
    expect(toolResult?.is_error).toBeUndefined();
    expect(String(toolResult?.content)).toContain(SECRET);

    const entries = await gw.engine.history(result.key as string);
    const reply = entries.filter((e) => e.type === "message" && e.role === "assistant").at(-1);
    expect(reply?.type === "message" && reply.toolCalls).toEqual([
      { id: "toolu_h", name: "sessions_history", arguments: { key: carl } },
    ]);
  });

  it("offers no tools to anyone else, and refuses a forged call as a failed tool_result", async () => {
    const from = upstream.messageRequests().length;
    upstream.setHandler((body) =>
      blocks(body, "user").some((b) => b.type === "tool_result")
        ? { content: "could not" }
        : { toolUses: [{ id: "toolu_f", name: "sessions_list", input: {} }] },
    );
    const result = await chat("mallory", "admin-mallory", "list everyone");
    expect(result.reply).toBe("could not");
    const [first, second] = upstream.messageRequests().slice(from);
    expect(first?.tools).toBeUndefined();
    const [refused] = blocks(second, "user").filter((b) => b.type === "tool_result");
    expect(refused?.is_error).toBe(true);
    expect(String(refused?.content)).not.toContain(SECRET);
  });
});
