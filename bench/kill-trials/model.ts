import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface EchoModel {
  /** What an `openai` model entry takes as `base_url`. */
  baseUrl: string;
  /** Requests answered so far. */
  answered(): number;
  close(): Promise<void>;
}

/**
 * A model that speaks the OpenAI chat-completions protocol (JSON, or SSE when `stream` is set) and answers
 * `echo: <last user message>` after a random delay of up to `maxDelayMs`, so that a kill finds turns running.
 */
export async function startEchoModel(maxDelayMs: number): Promise<EchoModel> {
  let answered = 0;
  const server = createServer((req, res) => {
    readBody(req)
      .then(async (text) => {
        if (req.method !== "POST" || !req.url?.endsWith("/chat/completions")) {
          res.writeHead(404, { "content-type": "application/json" }).end('{"error":{"message":"no route"}}');
          return;
        }
        const body = JSON.parse(text) as { model?: string; stream?: boolean; messages?: unknown[] };
        const content = `echo: ${lastUser(body.messages ?? [])}`;
        await new Promise((r) => setTimeout(r, Math.random() * maxDelayMs));
        if (body.stream) stream(res, body.model ?? "", content);
        else whole(res, body.model ?? "", content);
        answered++;
      })
      .catch(() => res.destroy());
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    answered: () => answered,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function lastUser(messages: unknown[]): string {
  const last = [...messages].reverse().find((m) => (m as { role?: unknown }).role === "user") as
    | { content?: unknown }
    | undefined;
  return typeof last?.content === "string" ? last.content : JSON.stringify(last?.content ?? "");
}

function whole(res: ServerResponse, model: string, content: string): void {
  const tokens = Math.ceil(content.length / 4);
  res.writeHead(200, { "content-type": "application/json" }).end(
    JSON.stringify({
      id: "chatcmpl-echo",
      object: "chat.completion",
      created: Math.floor(Date.now() / 1000),
      model,
      choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop", logprobs: null }],
      usage: { prompt_tokens: 1, completion_tokens: tokens, total_tokens: tokens + 1 },
    }),
  );
}

function stream(res: ServerResponse, model: string, content: string): void {
  const created = Math.floor(Date.now() / 1000);
  const frame = (delta: unknown, finish: string | null) =>
    `data: ${JSON.stringify({
      id: "chatcmpl-echo",
      object: "chat.completion.chunk",
      created,
      model,
      choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
    })}\n\n`;
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  res.write(frame({ role: "assistant", content: "" }, null));
  for (const piece of content.match(/\S+\s*|\s+/g) ?? []) res.write(frame({ content: piece }, null));
  res.write(frame({}, "stop"));
  res.end("data: [DONE]\n\n");
}
