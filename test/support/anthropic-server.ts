import type { ServerResponse } from "node:http";
import { type LocalServer, type RecordedRequest, sendJson, sleep, startLocalServer } from "./http-server.js";

export type { RecordedRequest } from "./http-server.js";

export interface MessagesRequestBody {
  model: string;
  max_tokens: number;
  system?: unknown;
  messages: Array<{ role: string; content: unknown }>;
  temperature?: number;
  [key: string]: unknown;
}

export interface MessageReply {
  content?: string;
  /** Tool calls after the text: `tool_use` blocks, and stop_reason `tool_use`. */
  toolUses?: Array<{ id: string; name: string; input: Record<string, unknown> }>;
  model?: string;
  stopReason?: string;
  /** Default: input = request JSON length / 4, output = content length / 4. */
  usage?: { inputTokens: number; outputTokens: number };
  /** Sent as `usage` exactly (e.g. with `cache_creation_input_tokens`, `cache_read_input_tokens`). */
  rawUsage?: { input_tokens: number; output_tokens: number; [field: string]: unknown };
  delayMs?: number;
}

export interface MessageErrorReply {
  status: number;
  /** Default: an Anthropic-style `{ type: "error", error: { type, message } }`. */
  body?: unknown;
  headers?: Record<string, string>;
  delayMs?: number;
}

export type MessageResponse = MessageReply | MessageErrorReply;
export type MessagesHandler = (
  body: MessagesRequestBody,
  request: RecordedRequest,
) => MessageResponse | Promise<MessageResponse>;

export interface AnthropicServer extends LocalServer {
  /** `http://127.0.0.1:<port>`: what the Anthropic client takes as baseURL (it adds `/v1`). */
  baseUrl: string;
  messageRequests(): MessagesRequestBody[];
  setHandler(handler: MessagesHandler): void;
}

let counter = 0;

/**
 * A local server for Anthropic's `POST /v1/messages`, recording every request: a JSON message, or with
 * `stream: true` the server-sent events the real API sends (message_start, one content block after
 * another with text or input_json deltas, message_delta with the stop reason and usage, message_stop).
 */
export async function startAnthropicServer(
  handler: MessagesHandler = () => ({ content: "ok" }),
): Promise<AnthropicServer> {
  let current = handler;
  const server = await startLocalServer(async (request, res) => {
    const closed = new AbortController();
    res.on("close", () => closed.abort());
    if (request.method !== "POST" || request.path !== "/v1/messages") {
      sendJson(res, 404, { type: "error", error: { type: "not_found_error", message: "no such route" } });
      return;
    }
    const body = request.body as MessagesRequestBody;
    const response = await current(body, request);
    await sleep(response.delayMs ?? 0, closed.signal);
    if (closed.signal.aborted) return;
    if ("status" in response) {
      sendJson(
        res,
        response.status,
        response.body ?? {
          type: "error",
          error: { type: "api_error", message: `scripted error ${response.status}` },
        },
        response.headers,
      );
      return;
    }
    const text = response.content ?? "";
    const message = {
      id: `msg_${++counter}`,
      type: "message",
      role: "assistant",
      model: response.model ?? body.model,
      content: [
        ...(text || !response.toolUses ? [{ type: "text", text }] : []),
        ...(response.toolUses ?? []).map((use) => ({ type: "tool_use", ...use })),
      ],
      stop_reason: response.stopReason ?? (response.toolUses ? "tool_use" : "end_turn"),
      stop_sequence: null,
      usage: response.rawUsage ?? {
        input_tokens: response.usage?.inputTokens ?? Math.ceil(JSON.stringify(body.messages).length / 4),
        output_tokens: response.usage?.outputTokens ?? Math.ceil(text.length / 4),
      },
    };
    if (body.stream === true) sendStream(res, message);
    else sendJson(res, 200, message);
  });
  return {
    ...server,
    baseUrl: server.origin,
    messageRequests: () =>
      server.requests.filter((r) => r.path === "/v1/messages").map((r) => r.body as MessagesRequestBody),
    setHandler: (next) => {
      current = next;
    },
  };
}

interface ScriptedMessage {
  content: Array<{ type: string; text?: string; id?: string; name?: string; input?: unknown }>;
  stop_reason: string;
  usage: { input_tokens: number; output_tokens: number; [field: string]: unknown };
  [field: string]: unknown;
}

function sendStream(res: ServerResponse, message: ScriptedMessage): void {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  const send = (type: string, data: Record<string, unknown>) =>
    res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  const { content, stop_reason, usage, ...head } = message;
  send("message_start", {
    message: {
      ...head,
      content: [],
      stop_reason: null,
      usage: { ...usage, output_tokens: 1 },
    },
  });
  content.forEach((block, index) => {
    if (block.type === "text") {
      send("content_block_start", { index, content_block: { type: "text", text: "" } });
      for (const piece of halves(block.text ?? "")) {
        send("content_block_delta", { index, delta: { type: "text_delta", text: piece } });
      }
    } else {
      send("content_block_start", {
        index,
        content_block: { type: "tool_use", id: block.id, name: block.name, input: {} },
      });
      for (const piece of halves(JSON.stringify(block.input ?? {}))) {
        send("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: piece } });
      }
    }
    send("content_block_stop", { index });
  });
  send("message_delta", {
    delta: { stop_reason, stop_sequence: null },
    usage: { output_tokens: usage.output_tokens },
  });
  send("message_stop", {});
  res.end();
}

/** A text in two pieces (so a client must join deltas), or none when it is empty. */
function halves(text: string): string[] {
  if (!text) return [];
  const cut = Math.ceil(text.length / 2);
  return cut < text.length ? [text.slice(0, cut), text.slice(cut)] : [text];
}
