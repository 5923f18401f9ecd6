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

/** A local server for Anthropic's `POST /v1/messages` (non-streaming), recording every request. */
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
    sendJson(res, 200, {
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
      usage: {
        input_tokens: response.usage?.inputTokens ?? Math.ceil(JSON.stringify(body.messages).length / 4),
        output_tokens: response.usage?.outputTokens ?? Math.ceil(text.length / 4),
      },
    });
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
