import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import WebSocket from "ws";
import { type ChatRequestBody, startOpenAiServer } from "../support/openai-server.js";
import { serveGateway } from "../support/serve-child.js";
import { type ReceivedSpan, startOtlpReceiver } from "./otlp-receiver.js";

const TOKEN = "otel-ws-frame-token-0123456789abcdef";
const CONNECTION_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const CONNECTION_SPAN = "00f067aa0ba902b7";
const FRAME_TRACE = "0af7651916cd43dd8448eb211c80319c";
const FRAME_SPAN = "b7ad6b7169203331";

interface Response {
  type: string;
  id?: string;
  ok: boolean;
  error?: { code: string; message: string };
}

describe("a WebSocket request frame's own traceparent", () => {
  it("replaces the connection's for that request only; a malformed one starts a new trace; a non-string one is refused", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sessiond-otel-ws-frame-"));
    const receiver = await startOtlpReceiver();
    const llm = await startOpenAiServer();
    const served = serveGateway(dir, TOKEN, [], {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.origin,
      OTEL_BSP_SCHEDULE_DELAY: "50",
    });
    try {
      writeFileSync(
        join(dir, "sessiond.yaml"),
        `models: { local: { provider: openai, base_url: "${llm.baseUrl}", model: m } }\nagents: [{ id: main, model: local }]\ntitles: { enabled: false }\n`,
      );
      const url = await served.listening();
      const socket = new WebSocket(`${url.replace("http", "ws")}/ws`, {
        headers: {
          authorization: `Bearer ${TOKEN}`,
          traceparent: `00-${CONNECTION_TRACE}-${CONNECTION_SPAN}-01`,
          tracestate: "conn=1",
        },
      });
      const replies = new Map<string, (frame: Response) => void>();
      socket.on("message", (data) => {
        const frame = JSON.parse(String(data)) as Response;
        if (frame.type === "res" && frame.id) replies.get(frame.id)?.(frame);
      });
      await new Promise((resolve, reject) => {
        socket.once("open", resolve);
        socket.once("error", reject);
      });
      // One request at a time, so the turns (and their model requests) come in this order.
      const request = (id: string, extra: Record<string, unknown>) =>
        new Promise<Response>((resolve) => {
          replies.set(id, resolve);
          socket.send(
            JSON.stringify({
              type: "req",
              id,
              method: "chat.send",
              params: { message: `hi ${id}` },
              ...extra,
            }),
          );
        });
      const framed = await request("1", {
        traceparent: `00-${FRAME_TRACE}-${FRAME_SPAN}-01`,
        tracestate: "frame=1",
      });
      const plain = await request("2", {});
      const malformed = await request("3", { traceparent: "not-a-traceparent", tracestate: "frame=3" });
      const refused = await request("4", { traceparent: 42 });
      socket.close();
      expect([framed.ok, plain.ok, malformed.ok]).toEqual([true, true, true]);
      expect(refused).toMatchObject({
        ok: false,
        error: { code: "INVALID_REQUEST", message: "traceparent must be a string" },
      });
      const exited = new Promise((r) => served.child.once("exit", r));
      served.child.kill("SIGTERM");
      await exited;

      const turns = receiver.spans.filter((s) => s.name === "invoke_agent main");
      expect(turns).toHaveLength(3);
      const inTrace = (trace: string) => turns.filter((s) => s.traceId === trace);
      const [frameTurn] = inTrace(FRAME_TRACE) as [ReceivedSpan];
      expect(frameTurn.parentSpanId).toBe(FRAME_SPAN);
      const [connectionTurn] = inTrace(CONNECTION_TRACE) as [ReceivedSpan];
      expect(connectionTurn.parentSpanId).toBe(CONNECTION_SPAN);
      const fresh = turns.find((s) => s !== frameTurn && s !== connectionTurn) as ReceivedSpan;
      expect(fresh.parentSpanId).toBe("");
      expect(inTrace(FRAME_TRACE)).toHaveLength(1);
      expect(inTrace(CONNECTION_TRACE)).toHaveLength(1);

      // The model requests: each turn's tracestate went along, never mixed with another's.
      const streamed = llm.requests.filter((r) => (r.body as ChatRequestBody).stream);
      expect(streamed.map((r) => [r.headers.traceparent?.slice(3, 35), r.headers.tracestate])).toEqual([
        [FRAME_TRACE, "frame=1"],
        [CONNECTION_TRACE, "conn=1"],
        [fresh.traceId, undefined],
      ]);
    } finally {
      served.kill();
      await llm.close();
      await receiver.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
