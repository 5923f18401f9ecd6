import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Agent, OpenAIProvider, Runner, type Session, setTracingDisabled, tool } from "@openai/agents";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { SUMMARY_HEADER } from "../../src/context/index.js";
import { createEngine, type Engine } from "../../src/index.js";
import { type ChatRequestBody, echoHandler, startOpenAiServer } from "../support/openai-server.js";

setTracingDisabled(true);

const KEY = "app_api:bob/agents";

/** A message's text: a string, or the SDK's `[{type: "text", text}]` parts joined. */
function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  return (content as Array<{ text?: string }>).map((part) => part.text ?? JSON.stringify(part)).join("");
}

/** The roles and texts a chat-completions request carried, tool calls and results included. */
function transcript(body: ChatRequestBody): string[] {
  return body.messages.map((m) => {
    const calls =
      (m.tool_calls as Array<{ id: string; function: { name: string; arguments: string } }>) ?? [];
    if (calls.length > 0)
      return `call ${calls.map((c) => `${c.id} ${c.function.name} ${c.function.arguments}`)}`;
    if (m.role === "tool") return `result ${m.tool_call_id as string} ${textOf(m.content)}`;
    return `${m.role} ${textOf(m.content)}`;
  });
}

describe("engine.session(key): the Agents SDK's Session", () => {
  let dir: string;
  let engine: Engine;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "sessiond-agents-"));
    engine = await createEngine({ dataDir: dir, titles: { enabled: false } });
  });

  afterEach(async () => {
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("is the memory of a real run(): messages, a function call and its result come back on the next run", async () => {
    // The model asks for the weather once, then answers with what the tool said; later it echoes.
    let calls = 0;
    const server = await startOpenAiServer((body) => {
      const last = body.messages.at(-1);
      if (last?.role === "user" && String(last.content).includes("weather") && calls++ === 0) {
        return { toolCalls: [{ id: "call_w1", name: "weather", arguments: '{"city":"Oslo"}' }] };
      }
      if (last?.role === "tool") return { content: `It is ${String(last.content)}.` };
      return echoHandler(body, { method: "POST", path: "", headers: {}, body });
    });
    try {
      const runner = new Runner({
        modelProvider: new OpenAIProvider({ baseURL: server.baseUrl, apiKey: "test", useResponses: false }),
      });
      const weather = tool({
        name: "weather",
        description: "The weather in a city",
        parameters: z.object({ city: z.string() }),
        execute: async ({ city }) => `sunny in ${city}`,
      });
      const agent = new Agent({
        name: "helper",
        instructions: "Be brief.",
        model: "test-model",
        tools: [weather],
      });
      const session: Session = engine.session(KEY);

      const first = await runner.run(agent, "What is the weather in Oslo?", { session });
      expect(first.finalOutput).toBe("It is sunny in Oslo.");
      const second = await runner.run(agent, "thanks", { session });
      expect(second.finalOutput).toBe("echo: thanks");

      // The second run's request held the first run's whole exchange, read back from the store.
      expect(transcript(server.chatRequests().at(-1)!)).toEqual([
        "system Be brief.",
        "user What is the weather in Oslo?",
        'call call_w1 weather {"city":"Oslo"}',
        "result call_w1 sunny in Oslo",
        "assistant It is sunny in Oslo.",
        "user thanks",
      ]);
      const items = await session.getItems();
      expect(items).toEqual([
        { type: "message", role: "user", content: "What is the weather in Oslo?" },
        {
          type: "function_call",
          callId: "call_w1",
          name: "weather",
          arguments: '{"city":"Oslo"}',
          status: "completed",
        },
        {
          type: "function_call_result",
          callId: "call_w1",
          name: "weather",
          status: "completed",
          output: { type: "text", text: "sunny in Oslo" },
        },
        {
          type: "message",
          role: "assistant",
          status: "completed",
          content: [{ type: "output_text", text: "It is sunny in Oslo." }],
        },
        { type: "message", role: "user", content: "thanks" },
        {
          type: "message",
          role: "assistant",
          status: "completed",
          content: [{ type: "output_text", text: "echo: thanks" }],
        },
      ]);
      expect(await session.getItems(2)).toEqual(items.slice(-2));
      expect(await session.getSessionId()).toBe(KEY);

      // They are sessiond entries of the key's session: the CLI, REST and dashboard see the same history.
      const history = await engine.history(KEY);
      expect(history.map((e) => (e.type === "message" ? e.role : e.type))).toEqual([
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
        "assistant",
      ]);
    } finally {
      await server.close();
    }
  });

  it("popItem retracts the newest item with a note; the history keeps it", async () => {
    const session = engine.session(KEY);
    await session.addItems([
      { role: "user", content: "one" },
      { role: "user", content: [{ type: "input_text", text: "two" }] },
    ]);
    expect(await session.popItem()).toEqual({ type: "message", role: "user", content: "two" });
    expect(await session.getItems()).toEqual([{ type: "message", role: "user", content: "one" }]);
    expect(await session.popItem()).toEqual({ type: "message", role: "user", content: "one" });
    expect(await session.popItem()).toBeUndefined();
    expect(await session.getItems()).toEqual([]);

    const history = await engine.history(KEY);
    expect(
      history.map((e) => (e.type === "message" ? e.content : `${e.type}:${e.type === "note" ? e.code : ""}`)),
    ).toEqual(["one", "two", "note:ITEM_RETRACTED", "note:ITEM_RETRACTED"]);
  });

  it("clearSession archives the generation and starts an empty one; nothing is lost", async () => {
    const session = engine.session(KEY);
    await session.clearSession(); // no session yet: nothing to do
    await session.addItems([{ role: "user", content: "before" }]);
    await session.clearSession();
    expect(await session.getItems()).toEqual([]);
    await session.addItems([{ role: "user", content: "after" }]);
    expect(await session.getItems()).toEqual([{ type: "message", role: "user", content: "after" }]);
    const all = await engine.history(KEY, { includeArchived: true });
    expect(all.flatMap((e) => (e.type === "message" ? [e.content] : []))).toEqual(["before", "after"]);
  });

  it("keeps function-call arguments that are not a JSON object as the text they were", async () => {
    const session = engine.session(KEY);
    const call = (callId: string, args: string) => ({
      type: "function_call" as const,
      callId,
      name: "f",
      arguments: args,
      status: "completed" as const,
    });
    await session.addItems([call("c1", "not json"), call("c2", "[1,2]"), call("c3", '{"a":1}')]);
    expect((await session.getItems()).map((i) => ("arguments" in i ? i.arguments : ""))).toEqual([
      "not json",
      "[1,2]",
      '{"a":1}',
    ]);
  });

  it("reads from the latest compaction on, its summary first", async () => {
    const session = engine.session(KEY);
    for (let i = 1; i <= 4; i++) {
      await session.addItems([
        { role: "user", content: `Question ${i} is about the deployment of service number ${i}.` },
        { role: "assistant", status: "completed", content: [{ type: "output_text", text: `Answer ${i}.` }] },
      ]);
    }
    await engine.compact(KEY);
    const items = await session.getItems();
    const first = items[0] as { role: string; content: string };
    expect(first.role).toBe("user");
    expect(first.content.startsWith(`${SUMMARY_HEADER}\n`)).toBe(true);
    expect(items.length).toBeLessThan(9);
    expect(items.at(-1)).toEqual({
      type: "message",
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text: "Answer 4." }],
    });
  });

  it("refuses an item type it has no entry for, storing nothing of the call", async () => {
    const session = engine.session(KEY);
    const reasoning = { type: "reasoning", content: [{ type: "input_text", text: "hmm" }] };
    await expect(
      session.addItems([
        { role: "user", content: "kept?" },
        reasoning as unknown as { role: "user"; content: string },
      ]),
    ).rejects.toMatchObject({ code: "INVALID_ARGUMENT", details: { index: 1, type: "reasoning" } });
    expect(await session.getItems()).toEqual([]);
    expect(await engine.sessions.get(KEY)).toBeUndefined();
  });
});
