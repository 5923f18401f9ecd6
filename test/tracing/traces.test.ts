import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import WebSocket from "ws";
import { startAnthropicServer } from "../support/anthropic-server.js";
import { waitFor } from "../support/child-output.js";
import { sleep } from "../support/http-server.js";
import { type ChatRequestBody, type ChatResponse, startOpenAiServer } from "../support/openai-server.js";
import { serveGateway } from "../support/serve-child.js";
import { type ReceivedSpan, startOtlpReceiver } from "./otlp-receiver.js";

const TOKEN = "otel-traces-token-0123456789abcdef";
const auth = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
const CALLER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN = "00f067aa0ba902b7";
const SPAN_KIND_INTERNAL = 1;
const SPAN_KIND_CLIENT = 3;

/** Streaming turns: a tool call first when tools are offered, then a reply; completions: a title or a summary. */
function model(body: ChatRequestBody): ChatResponse {
  if (!body.stream) {
    const system = String(body.messages[0]?.content ?? "");
    return /title/i.test(system)
      ? { content: "Weather talk" }
      : { content: "They talked about the weather." };
  }
  const answered = body.messages.some((m) => m.role === "tool");
  if (body.tools?.length && !answered) {
    return {
      toolCalls: [{ id: "call_7", name: "sessions_list", arguments: "{}" }],
      usage: { promptTokens: 11, completionTokens: 3 },
    };
  }
  return { content: "sunny all week", usage: { promptTokens: 17, completionTokens: 5 } };
}

async function until<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 400; i++) {
    const found = await probe();
    if (found !== undefined) return found;
    await sleep(25);
  }
  throw new Error(`never: ${what}`);
}

describe("traces grouped by session", () => {
  it("exports invoke_agent → chat / execute_tool, compaction and title spans with a hashed conversation id", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sessiond-otel-"));
    const receiver = await startOtlpReceiver();
    const llm = await startOpenAiServer(model);
    const served = serveGateway(dir, TOKEN, [], {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.origin,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_BSP_SCHEDULE_DELAY: "50",
      OTEL_SERVICE_NAME: "sessiond-test",
    });
    try {
      writeFileSync(
        join(dir, "sessiond.yaml"),
        [
          `models: { local: { provider: openai, base_url: "${llm.baseUrl}", model: test-model } }`,
          "agents: [{ id: main, model: local }]",
          "admins: [alice]",
          "titles: { model: local }",
          "compaction: { model: local, max_messages: 100, keep_recent: 2 }",
          "",
        ].join("\n"),
      );
      const url = await served.listening();
      await waitFor(served.child, /tracing: OTLP\/HTTP \(an OTLP endpoint is configured\)/, served.output);
      const chat = async (sessionId: string, message: string, headers: Record<string, string> = {}) => {
        const res = await fetch(`${url}/api/chat`, {
          method: "POST",
          headers: { ...auth, ...headers },
          body: JSON.stringify({ message, sender: "alice", session_id: sessionId }),
        });
        expect(res.status).toBe(200);
        return (await res.json()) as { key: string; generation_id: string };
      };
      const first = await chat("admin-weather", "what is the weather?", {
        traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01`,
      });
      const second = await chat("admin-weather", "and tomorrow?");
      const other = await chat("admin-other", "hello there");
      expect(second.generation_id).toBe(first.generation_id);
      const history = async () =>
        (await (
          await fetch(`${url}/api/sessions/${encodeURIComponent(first.key)}/history`, { headers: auth })
        ).json()) as { entries: Array<{ type: string; sessionId?: string }> };
      await until("a title", async () =>
        (await history()).entries.some((e) => e.type === "title") ? true : undefined,
      );
      const compacted = await fetch(`${url}/api/sessions/${encodeURIComponent(first.key)}/compact`, {
        method: "POST",
        headers: auth,
      });
      expect(compacted.status).toBe(200);
      const exited = new Promise((r) => served.child.once("exit", r));
      served.child.kill("SIGTERM");
      await exited;

      const spans = receiver.spans;
      expect(receiver.contentTypes.every((type) => type.startsWith("application/json"))).toBe(true);
      expect(new Set(spans.map((s) => s.service))).toEqual(new Set(["sessiond-test"]));
      const agents = spans.filter((s) => s.name === "invoke_agent main");
      expect(agents).toHaveLength(3);
      const [turn1, turn2, turn3] = agents as [ReceivedSpan, ReceivedSpan, ReceivedSpan];
      for (const agent of agents) {
        expect(agent.kind).toBe(SPAN_KIND_INTERNAL);
        expect(agent.attributes["gen_ai.operation.name"]).toBe("invoke_agent");
        expect(agent.attributes["gen_ai.agent.name"]).toBe("main");
      }
      // The caller's traceparent: the first turn is a child of the caller's span, in the caller's trace.
      expect(turn1.traceId).toBe(CALLER_TRACE);
      expect(turn1.parentSpanId).toBe(CALLER_SPAN);
      expect(turn2.traceId).not.toBe(CALLER_TRACE);
      // Grouped by session: one conversation id for both turns of a session, another for the other session.
      const conversation = turn1.attributes["gen_ai.conversation.id"];
      expect(conversation).toMatch(/^[0-9a-f]{32}$/);
      expect(turn2.attributes["gen_ai.conversation.id"]).toBe(conversation);
      expect(turn3.attributes["gen_ai.conversation.id"]).not.toBe(conversation);
      // Not reversible from the spans: no span carries a session id.
      for (const id of [first.generation_id, other.generation_id])
        expect(JSON.stringify(spans)).not.toContain(id);

      // Turn 1: chat (tool call) → execute_tool → chat (reply), all children of invoke_agent.
      const children = spans.filter((s) => s.parentSpanId === turn1.spanId);
      expect(children.map((s) => s.name)).toEqual([
        "chat test-model",
        "execute_tool sessions_list",
        "chat test-model",
      ]);
      const [ask, tool, reply] = children as [ReceivedSpan, ReceivedSpan, ReceivedSpan];
      expect(ask.kind).toBe(SPAN_KIND_CLIENT);
      expect(ask.attributes).toMatchObject({
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "test-model",
        "gen_ai.response.model": "test-model",
        "gen_ai.usage.input_tokens": 11,
        "gen_ai.usage.output_tokens": 3,
        "gen_ai.conversation.id": conversation,
        "server.address": "127.0.0.1",
      });
      expect(reply.attributes).toMatchObject({
        "gen_ai.usage.input_tokens": 17,
        "gen_ai.usage.output_tokens": 5,
      });
      expect(tool.attributes).toMatchObject({
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "sessions_list",
        "gen_ai.tool.call.id": "call_7",
        "gen_ai.conversation.id": conversation,
      });
      expect(turn1.attributes).toMatchObject({
        "gen_ai.usage.input_tokens": 28,
        "gen_ai.usage.output_tokens": 8,
      });
      for (const span of children) expect(span.traceId).toBe(CALLER_TRACE);

      // The model requests carried the chat span's traceparent.
      const streamed = llm.requests.filter((r) => (r.body as ChatRequestBody).stream);
      expect(streamed[0]?.headers.traceparent).toBe(`00-${CALLER_TRACE}-${ask.spanId}-01`);
      expect(streamed[1]?.headers.traceparent).toBe(`00-${CALLER_TRACE}-${reply.spanId}-01`);

      // Title and compaction: chat spans of their own, grouped under the session's conversation id.
      const purposes = spans
        .filter((s) => s.attributes["sessiond.call.purpose"] !== undefined)
        .map((s) => [s.name, s.attributes["sessiond.call.purpose"], s.attributes["gen_ai.conversation.id"]]);
      expect(purposes).toEqual(
        expect.arrayContaining([
          ["chat test-model", "title", conversation],
          ["chat test-model", "compaction", conversation],
        ]),
      );
    } finally {
      served.kill();
      await llm.close();
      await receiver.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("an Anthropic turn through /v1/chat/completions joins the caller's trace, and its title call too", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sessiond-otel-anthropic-"));
    const receiver = await startOtlpReceiver();
    const llm = await startAnthropicServer((body) =>
      body.stream
        ? { content: "hello back", usage: { inputTokens: 21, outputTokens: 4 } }
        : { content: "Greetings", usage: { inputTokens: 9, outputTokens: 2 } },
    );
    const served = serveGateway(dir, TOKEN, [], {
      OTEL_TRACES_EXPORTER: "otlp",
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.origin}/v1/traces`,
      OTEL_BSP_SCHEDULE_DELAY: "50",
      SESSIOND_T_ANTHROPIC_KEY: "sk-ant-test-0123456789",
    });
    try {
      writeFileSync(
        join(dir, "sessiond.yaml"),
        [
          `models: { claude: { provider: anthropic, base_url: "${llm.baseUrl}", model: claude-test, api_key_env: SESSIOND_T_ANTHROPIC_KEY } }`,
          "agents: [{ id: main, model: claude }]",
          "titles: { model: claude }",
          "",
        ].join("\n"),
      );
      const url = await served.listening();
      const res = await fetch(`${url}/v1/chat/completions`, {
        method: "POST",
        headers: { ...auth, traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` },
        body: JSON.stringify({
          model: "main",
          user: "otel-user",
          messages: [{ role: "user", content: "hello" }],
        }),
      });
      expect(res.status).toBe(200);
      // The title is written in the background: its span is exported once it ends.
      await until("the title's span", async () =>
        receiver.spans.some((span) => span.attributes["sessiond.call.purpose"] === "title")
          ? true
          : undefined,
      );
      const exited = new Promise((r) => served.child.once("exit", r));
      served.child.kill("SIGTERM");
      await exited;

      const turn = receiver.spans.find((s) => s.name === "invoke_agent main") as ReceivedSpan;
      expect(turn.traceId).toBe(CALLER_TRACE);
      const chat = receiver.spans.find((s) => s.parentSpanId === turn.spanId) as ReceivedSpan;
      expect(chat.name).toBe("chat claude-test");
      expect(chat.attributes).toMatchObject({
        "gen_ai.provider.name": "anthropic",
        "gen_ai.usage.input_tokens": 21,
        "gen_ai.usage.output_tokens": 4,
        "gen_ai.conversation.id": turn.attributes["gen_ai.conversation.id"],
      });
      const streamed = llm.requests.find((r) => (r.body as { stream?: boolean }).stream);
      expect(streamed?.headers.traceparent).toBe(`00-${CALLER_TRACE}-${chat.spanId}-01`);
      const title = receiver.spans.find((s) => s.attributes["sessiond.call.purpose"] === "title");
      expect(title?.attributes).toMatchObject({
        "gen_ai.provider.name": "anthropic",
        "gen_ai.usage.input_tokens": 9,
        "gen_ai.conversation.id": turn.attributes["gen_ai.conversation.id"],
      });
    } finally {
      served.kill();
      await llm.close();
      await receiver.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a WebSocket connection's traceparent is the caller's trace for its chat.send turns", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sessiond-otel-ws-"));
    const receiver = await startOtlpReceiver();
    const llm = await startOpenAiServer();
    const served = serveGateway(dir, TOKEN, [], { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.origin });
    try {
      writeFileSync(
        join(dir, "sessiond.yaml"),
        `models: { local: { provider: openai, base_url: "${llm.baseUrl}", model: m } }\nagents: [{ id: main, model: local }]\n`,
      );
      const url = await served.listening();
      const socket = new WebSocket(`${url.replace("http", "ws")}/ws`, {
        headers: { authorization: `Bearer ${TOKEN}`, traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` },
      });
      const reply = await new Promise<{ ok: boolean }>((resolve, reject) => {
        socket.on("error", reject);
        socket.on("open", () =>
          socket.send(
            JSON.stringify({ type: "req", id: "1", method: "chat.send", params: { message: "hi" } }),
          ),
        );
        socket.on("message", (data) => {
          const frame = JSON.parse(String(data)) as { type: string; id?: string; ok: boolean };
          if (frame.type === "res" && frame.id === "1") resolve(frame);
        });
      });
      socket.close();
      expect(reply.ok).toBe(true);
      const exited = new Promise((r) => served.child.once("exit", r));
      served.child.kill("SIGTERM");
      await exited;
      const turn = receiver.spans.find((s) => s.name === "invoke_agent main");
      expect(turn?.traceId).toBe(CALLER_TRACE);
      expect(turn?.parentSpanId).toBe(CALLER_SPAN);
    } finally {
      served.kill();
      await llm.close();
      await receiver.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
