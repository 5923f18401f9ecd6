import type { ServerResponse } from "node:http";
import { type LocalServer, type RecordedRequest, sendJson, sleep, startLocalServer } from "./http-server.js";

export type { RecordedRequest } from "./http-server.js";

/** The parts of a chat-completions request the tests look at; the rest is kept as sent. */
export interface ChatRequestBody {
  model: string;
  messages: Array<{ role: string; content?: unknown; [key: string]: unknown }>;
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  temperature?: number;
  max_tokens?: number;
  tools?: unknown[];
  [key: string]: unknown;
}

export interface ToolCallReply {
  id?: string;
  name: string;
  /** JSON text, sent as is (and in two pieces when streaming). */
  arguments: string;
}

export interface ChatReply {
  content?: string;
  /** Streaming only: the content deltas in order (default: the content cut after each space). */
  chunks?: string[];
  toolCalls?: ToolCallReply[];
  /** Default `tool_calls` when there are tool calls, else `stop`. */
  finishReason?: string;
  /** Default: the model asked for. */
  model?: string;
  /** Default: prompt = request JSON length / 4, completion = content length / 4; null sends none. */
  usage?: { promptTokens: number; completionTokens: number } | null;
  /** Sent as `usage` exactly (a provider's real shape: cached tokens, OpenRouter's `cost`); wins over `usage`. */
  rawUsage?: Record<string, unknown>;
  /** Wait this long before answering. */
  delayMs?: number;
  /** Streaming only: wait this long before each chunk. */
  chunkDelayMs?: number;
  /** Streaming only: drop the connection after this many chunks. */
  dropAfterChunks?: number;
}

export interface ErrorReply {
  status: number;
  /** Default: an OpenAI-style `{ error: { message, type } }`. */
  body?: unknown;
  headers?: Record<string, string>;
  delayMs?: number;
}

export type ChatResponse = ChatReply | ErrorReply;
export type ChatHandler = (
  body: ChatRequestBody,
  request: RecordedRequest,
) => ChatResponse | Promise<ChatResponse>;

export interface OpenAiServer extends LocalServer {
  /** `http://127.0.0.1:<port>/v1`: what an OpenAI client takes as baseURL. */
  baseUrl: string;
  /** The bodies of the chat-completion requests so far. */
  chatRequests(): ChatRequestBody[];
  setHandler(handler: ChatHandler): void;
}

export function isErrorReply(response: ChatResponse): response is ErrorReply {
  return "status" in response;
}

/** Default handler: answers `echo: <last user message>`. */
export const echoHandler: ChatHandler = (body) => {
  const last = [...body.messages].reverse().find((m) => m.role === "user");
  return {
    content: `echo: ${typeof last?.content === "string" ? last.content : JSON.stringify(last?.content)}`,
  };
};

let counter = 0;

function usageOf(reply: ChatReply, body: ChatRequestBody) {
  if (reply.rawUsage) return reply.rawUsage;
  if (reply.usage === null) return undefined;
  const prompt = reply.usage?.promptTokens ?? Math.ceil(JSON.stringify(body.messages).length / 4);
  const completion = reply.usage?.completionTokens ?? Math.ceil((reply.content ?? "").length / 4);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

function splitWords(text: string): string[] {
  return text.match(/\S+\s*|\s+/g) ?? [];
}

async function sendStream(
  res: ServerResponse,
  body: ChatRequestBody,
  reply: ChatReply,
  signal: AbortSignal,
): Promise<void> {
  const id = `chatcmpl-${++counter}`;
  const model = reply.model ?? body.model;
  const created = Math.floor(Date.now() / 1000);
  const calls = reply.toolCalls ?? [];
  const frames: unknown[] = [];
  const chunk = (delta: unknown, finish: string | null = null) => ({
    id,
    object: "chat.completion.chunk",
    created,
    model,
    choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
  });
  frames.push(chunk({ role: "assistant", content: "" }));
  for (const piece of reply.chunks ?? splitWords(reply.content ?? "")) frames.push(chunk({ content: piece }));
  calls.forEach((call, index) => {
    const half = Math.ceil(call.arguments.length / 2);
    frames.push(
      chunk({
        tool_calls: [
          {
            index,
            id: call.id ?? `call_${index}`,
            type: "function",
            function: { name: call.name, arguments: "" },
          },
        ],
      }),
    );
    for (const part of [call.arguments.slice(0, half), call.arguments.slice(half)]) {
      if (part) frames.push(chunk({ tool_calls: [{ index, function: { arguments: part } }] }));
    }
  });
  frames.push(chunk({}, reply.finishReason ?? (calls.length ? "tool_calls" : "stop")));
  const usage = usageOf(reply, body);
  if (body.stream_options?.include_usage && usage) {
    frames.push({ id, object: "chat.completion.chunk", created, model, choices: [], usage });
  }
  res.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    connection: "keep-alive",
  });
  let sent = 0;
  for (const frame of frames) {
    if (reply.dropAfterChunks !== undefined && sent >= reply.dropAfterChunks) {
      res.destroy();
      return;
    }
    await sleep(reply.chunkDelayMs ?? 0, signal);
    if (signal.aborted) return;
    res.write(`data: ${JSON.stringify(frame)}\n\n`);
    sent++;
  }
  res.end("data: [DONE]\n\n");
}

function sendCompletion(res: ServerResponse, body: ChatRequestBody, reply: ChatReply): void {
  const calls = reply.toolCalls ?? [];
  const usage = usageOf(reply, body);
  sendJson(res, 200, {
    id: `chatcmpl-${++counter}`,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: reply.model ?? body.model,
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: reply.content ?? null,
          refusal: null,
          ...(calls.length
            ? {
                tool_calls: calls.map((call, index) => ({
                  id: call.id ?? `call_${index}`,
                  type: "function",
                  function: { name: call.name, arguments: call.arguments },
                })),
              }
            : {}),
        },
        finish_reason: reply.finishReason ?? (calls.length ? "tool_calls" : "stop"),
        logprobs: null,
      },
    ],
    ...(usage ? { usage } : {}),
  });
}

/**
 * A local OpenAI-compatible server: `POST /v1/chat/completions` (JSON, or SSE when `stream: true`)
 * and `GET /v1/models`, answering as the handler scripts and recording every request.
 */
export async function startOpenAiServer(
  handler: ChatHandler = echoHandler,
  options: { models?: string[] } = {},
): Promise<OpenAiServer> {
  let current = handler;
  const server = await startLocalServer(async (request, res) => {
    const closed = new AbortController();
    res.on("close", () => closed.abort());
    if (request.method === "GET" && request.path === "/v1/models") {
      sendJson(res, 200, {
        object: "list",
        data: (options.models ?? ["test-model"]).map((id) => ({
          id,
          object: "model",
          created: 0,
          owned_by: "local",
        })),
      });
      return;
    }
    if (request.method !== "POST" || request.path !== "/v1/chat/completions") {
      sendJson(res, 404, {
        error: { message: `no route for ${request.method} ${request.path}`, type: "not_found" },
      });
      return;
    }
    const body = request.body as ChatRequestBody;
    const response = await current(body, request);
    await sleep(response.delayMs ?? 0, closed.signal);
    if (closed.signal.aborted) return;
    if (isErrorReply(response)) {
      sendJson(
        res,
        response.status,
        response.body ?? { error: { message: `scripted error ${response.status}`, type: "server_error" } },
        response.headers,
      );
      return;
    }
    if (body.stream) await sendStream(res, body, response, closed.signal);
    else sendCompletion(res, body, response);
  });
  return {
    ...server,
    baseUrl: `${server.origin}/v1`,
    chatRequests: () =>
      server.requests.filter((r) => r.path === "/v1/chat/completions").map((r) => r.body as ChatRequestBody),
    setHandler: (next) => {
      current = next;
    },
  };
}
