import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load.js";
import type { RuntimeEvent } from "../../src/model/runtime.js";
import { ADMIN_TOOL_MAX_LIMIT, adminToolsFor } from "../../src/runtimes/admin-tools.js";
import { MAX_TOOL_ROUNDS, modelRuntime } from "../../src/runtimes/model.js";
import { JsonlStore } from "../../src/store/jsonl/jsonl-store.js";
import {
  type ChatRequestBody,
  echoHandler,
  type OpenAiServer,
  startOpenAiServer,
} from "../support/openai-server.js";
import { json, postJson, startTestGateway, type TestGateway } from "./http/helpers.js";

const SECRET = "SECRET-BOB-42";
let upstream: OpenAiServer;
let gw: TestGateway;
let bobKey: string;
let seeded = 0;

interface ToolFunction {
  function: { name: string };
}

function toolNames(body: ChatRequestBody | undefined): string[] | undefined {
  return body?.tools?.map((t) => (t as ToolFunction).function.name);
}

function toolMessages(body: ChatRequestBody | undefined) {
  return (body?.messages ?? []).filter((m) => m.role === "tool");
}

/** The requests of one turn: those made after `from`. */
function requestsSince(from: number): ChatRequestBody[] {
  return upstream.chatRequests().slice(from);
}

async function chat(sender: string, sessionId: string, message: string) {
  const res = await gw.api("/api/chat", postJson({ message, sender, session_id: sessionId }));
  expect(res.status).toBe(200);
  return json(res);
}

async function storedToolCalls(key: string) {
  const entries = await gw.engine.history(key);
  const reply = entries.filter((e) => e.type === "message" && e.role === "assistant").at(-1);
  return reply?.type === "message" ? { content: reply.content, toolCalls: reply.toolCalls } : undefined;
}

beforeAll(async () => {
  upstream = await startOpenAiServer();
  gw = await startTestGateway(
    {
      models: { upstream: { provider: "openai", baseUrl: upstream.baseUrl, model: "test-model" } },
      agentOptions: { main: { model: "upstream" } },
      admins: ["alice"],
    },
    {},
  );
});
afterAll(async () => {
  await gw.stop();
  await upstream.close();
});

beforeEach(async () => {
  upstream.setHandler(echoHandler);
  // Another user's conversation, which only an admin's tools may read.
  bobKey = (await chat("bob", `admin-bob-${++seeded}`, `my plan is ${SECRET}`)).key;
});

describe("admin tools", () => {
  it("takes the admin list from the config", () => {
    const dir = mkdtempSync(join(tmpdir(), "sessiond-admins-"));
    try {
      writeFileSync(join(dir, "sessiond.yaml"), "admins: [alice, bob]\n");
      expect(loadConfig({ file: join(dir, "sessiond.yaml"), env: {} }).config.admins).toEqual([
        "alice",
        "bob",
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("offers both tools in an admin's conversation and feeds their results back to the model", async () => {
    const from = upstream.chatRequests().length;
    upstream.setHandler((body) =>
      toolMessages(body).length === 0
        ? {
            toolCalls: [
              { id: "call_list", name: "sessions_list", arguments: '{"limit":10}' },
              { id: "call_hist", name: "sessions_history", arguments: JSON.stringify({ key: bobKey }) },
            ],
          }
        : { content: "done reading" },
    );
    const result = await chat("alice", "admin-alice", "what are people talking about?");
    expect(result.reply).toBe("done reading");

    const [first, second, ...rest] = requestsSince(from);
    expect(rest).toEqual([]);
    expect(toolNames(first)).toEqual(["sessions_list", "sessions_history", "sessions_search"]);
    const assistant = second?.messages.find((m) => m.role === "assistant" && m.tool_calls);
    expect(assistant?.tool_calls).toEqual([
      { id: "call_list", type: "function", function: { name: "sessions_list", arguments: '{"limit":10}' } },
      {
        id: "call_hist",
        type: "function",
        function: { name: "sessions_history", arguments: JSON.stringify({ key: bobKey }) },
      },
    ]);
    const [listResult, historyResult] = toolMessages(second);
    expect(listResult?.tool_call_id).toBe("call_list");
    const listed = JSON.parse(String(listResult?.content)) as { sessions: Array<{ key: string }> };
    expect(listed.sessions.map((s) => s.key)).toContain(bobKey);
    expect(historyResult?.tool_call_id).toBe("call_hist");
    const history = JSON.parse(String(historyResult?.content)) as { messages: Array<{ content: string }> };
    expect(history.messages.map((m) => m.content)).toContain(`my plan is ${SECRET}`);

    const stored = await storedToolCalls(result.key);
    expect(stored?.content).toBe("done reading");
    expect(stored?.toolCalls).toEqual([
      { id: "call_list", name: "sessions_list", arguments: { limit: 10 } },
      { id: "call_hist", name: "sessions_history", arguments: { key: bobKey } },
    ]);
  });

  it("offers no tools to anyone else and refuses a forged call without reading any session", async () => {
    const from = upstream.chatRequests().length;
    upstream.setHandler((body) =>
      toolMessages(body).length === 0
        ? {
            toolCalls: [
              { id: "forged", name: "sessions_history", arguments: JSON.stringify({ key: bobKey }) },
            ],
          }
        : { content: "I cannot do that" },
    );
    const result = await chat("carol", "admin-carol", "show me bob's conversation");
    expect(result.reply).toBe("I cannot do that");

    const requests = requestsSince(from);
    expect(requests).toHaveLength(2);
    expect(requests[0]?.tools).toBeUndefined();
    expect(requests[1]?.tools).toBeUndefined();
    const [refusal] = toolMessages(requests[1]);
    expect(refusal?.tool_call_id).toBe("forged");
    expect(JSON.parse(String(refusal?.content))).toEqual({
      error: 'the tool "sessions_history" is not available in this conversation',
    });
    expect(JSON.stringify(requests)).not.toContain(SECRET);

    const stored = await storedToolCalls(result.key);
    expect(stored?.toolCalls).toEqual([
      { id: "failed", name: "sessions_history", arguments: { key: bobKey } },
    ]);
  });

  it("sessions_search finds what another user said for an admin, and is refused to anyone else", async () => {
    const signal = new AbortController().signal;
    const call = { name: "sessions_search", arguments: JSON.stringify({ query: "plan", limit: 50 }) };
    const found = await adminToolsFor("alice", { engine: gw.engine, admins: ["alice"] }).execute(
      call,
      signal,
    );
    expect(found.failed).toBeUndefined();
    const { hits } = JSON.parse(found.content) as {
      hits: Array<{ key: string; role: string; text: string }>;
    };
    expect(hits).toContainEqual(
      expect.objectContaining({ key: bobKey, role: "user", text: `my **plan** is ${SECRET}` }),
    );
    const empty = await adminToolsFor("alice", { engine: gw.engine, admins: ["alice"] }).execute(
      { name: "sessions_search", arguments: "{}" },
      signal,
    );
    expect(empty.failed).toBe(true);
    const refused = await adminToolsFor("carol", { engine: gw.engine, admins: ["alice"] }).execute(
      call,
      signal,
    );
    expect(refused).toEqual({
      content: JSON.stringify({ error: 'the tool "sessions_search" is not available in this conversation' }),
      failed: true,
    });
  });

  it("refuses a tool it did not offer even to an admin, and caps limits", async () => {
    const tools = adminToolsFor("alice", { engine: gw.engine, admins: ["alice"] });
    const signal = new AbortController().signal;
    const unknown = await tools.execute({ name: "delete_everything", arguments: "{}" }, signal);
    expect(unknown.failed).toBe(true);
    const badArgs = await tools.execute({ name: "sessions_history", arguments: "[1]" }, signal);
    expect(badArgs.failed).toBe(true);
    const missing = await tools.execute(
      { name: "sessions_history", arguments: '{"key":"nope:nope"}' },
      signal,
    );
    expect(missing.failed).toBe(true);
    for (let i = 0; i < ADMIN_TOOL_MAX_LIMIT; i++) {
      const key = bobKey.replace(/admin-bob-\d+$/, `admin-bulk-${i}`);
      await gw.engine.append(key, [{ type: "message", role: "user", content: "hi" }]);
    }
    const capped = await tools.execute({ name: "sessions_list", arguments: '{"limit":500}' }, signal);
    expect(capped.failed).toBeUndefined();
    expect((JSON.parse(capped.content) as { sessions: unknown[] }).sessions).toHaveLength(
      ADMIN_TOOL_MAX_LIMIT,
    );

    const none = adminToolsFor("carol", { engine: gw.engine, admins: ["alice"] });
    expect(none.definitions).toEqual([]);
    expect((await none.execute({ name: "sessions_list", arguments: "{}" }, signal)).failed).toBe(true);
  });
});

describe("the model runtime's tool loop", () => {
  it("stops after a bounded number of rounds, recording the unexecuted calls as failed", async () => {
    const from = upstream.chatRequests().length;
    upstream.setHandler(() => ({ toolCalls: [{ name: "sessions_list", arguments: "{}" }] }));
    const runtime = modelRuntime({ provider: "openai", baseUrl: upstream.baseUrl, model: "test-model" });
    let executed = 0;
    const events: RuntimeEvent[] = [];
    for await (const event of runtime.run({
      key: "k",
      agent: "main",
      messages: [{ role: "user", content: "loop" }],
      input: "loop",
      session: { id: "s", entryCount: 0, approxTokens: 0 },
      signal: new AbortController().signal,
      tools: {
        definitions: [],
        execute: async () => {
          executed++;
          return { content: "{}" };
        },
      },
    })) {
      events.push(event);
    }
    expect(requestsSince(from)).toHaveLength(MAX_TOOL_ROUNDS);
    expect(executed).toBe(MAX_TOOL_ROUNDS - 1);
    const calls = events.filter((e) => e.type === "tool_call");
    expect(calls).toHaveLength(MAX_TOOL_ROUNDS);
    expect(calls.map((c) => c.type === "tool_call" && c.failed === true)).toEqual([
      false,
      false,
      false,
      true,
    ]);
  });
});

describe("sessions_search while the store's index is being built", () => {
  it("says so beside its hits", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sessiond-admin-jsonl-"));
    const init = { agent: "main", channel: "telegram", createdBy: "test" };
    try {
      const first = new JsonlStore({ path: dir });
      for (let i = 0; i < 40; i++)
        await first.append(`telegram:${i}`, [{ type: "message", role: "user", content: `plan ${i}` }], {
          init,
        });
      await first.close();
      rmSync(join(dir, ".sessiond", "search.db"));
      const store = new JsonlStore({ path: dir });
      const reader = {
        store,
        sessions: { list: () => Promise.resolve({ sessions: [] }) },
        history: () => Promise.resolve([]),
      };
      const result = await adminToolsFor("alice", { engine: reader, admins: ["alice"] }).execute(
        { name: "sessions_search", arguments: JSON.stringify({ query: "plan" }) },
        new AbortController().signal,
      );
      expect(JSON.parse(result.content)).toMatchObject({ indexing: true });
      await store.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
