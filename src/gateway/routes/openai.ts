import { getConnInfo } from "@hono/node-server/conninfo";
import type { Context } from "hono";
import { Hono } from "hono";
import { ulid } from "ulid";
import type { Envelope } from "../../model/envelope.js";
import { readJsonObject } from "../body.js";
import { badRequest, describeError, HttpError } from "../errors.js";
import { sseReply } from "../sse.js";
import { runTurn } from "../turn.js";
import type { GatewayEnv, RouteDeps } from "../types.js";

/**
 * The OpenAI-compatible API. Agents are the models. The session is `openai-compat:<client IP>` and its
 * stored history is authoritative: only the request's last user message is used (as the turn's input);
 * earlier messages in the request are ignored, since the gateway already holds the conversation.
 */
export function openAiRoutes(deps: RouteDeps): Hono<GatewayEnv> {
  const app = new Hono<GatewayEnv>();

  app.get("/v1/models", (c) =>
    c.json({
      object: "list",
      data: deps.engine.routing.agents.map((id) => ({
        id,
        object: "model",
        created: 0,
        owned_by: "sessiond",
      })),
    }),
  );

  app.post("/v1/chat/completions", async (c) => {
    const body = await readJsonObject(c, deps.bodyLimit);
    const agent = agentOf(deps, body.model);
    const text = lastUserText(body.messages);
    const clientIp = clientIpOf(c, deps.trustProxyHeader);
    const envelope: Envelope = {
      agent,
      channel: "openai",
      chat: { type: "direct", id: clientIp },
      sender: { id: clientIp },
      text,
      entryPoint: { kind: "openai_compat", clientIp },
    };
    deps.engine.route(envelope);
    const id = `chatcmpl-${ulid()}`;
    const created = Math.floor(Date.now() / 1000);
    if (body.stream !== true) {
      const result = await runTurn(deps, envelope);
      const content = result.reply?.content ?? result.notice ?? "";
      const prompt = Math.ceil(text.length / 4);
      const completion = Math.ceil(content.length / 4);
      return c.json({
        id,
        object: "chat.completion",
        created,
        model: agent,
        choices: [
          { index: 0, message: { role: "assistant", content }, finish_reason: "stop", logprobs: null },
        ],
        usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
      });
    }
    const chunk = (delta: Record<string, unknown>, finish: string | null) =>
      JSON.stringify({
        id,
        object: "chat.completion.chunk",
        created,
        model: agent,
        choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
      });
    return sseReply(c, async (stream) => {
      await stream.writeSSE({ data: chunk({ role: "assistant", content: "" }, null) });
      let streamed = false;
      try {
        const result = await runTurn(deps, envelope, {
          onText: (delta) => {
            streamed = true;
            return stream.writeSSE({ data: chunk({ content: delta }, null) });
          },
        });
        // A reset trigger (`/new`) runs nothing and answers with a notice instead.
        if (!streamed && result.notice)
          await stream.writeSSE({ data: chunk({ content: result.notice }, null) });
        await stream.writeSSE({ data: chunk({}, "stop") });
      } catch (error) {
        await stream.writeSSE({ data: JSON.stringify(describeError(error).body) });
      }
      await stream.writeSSE({ data: "[DONE]" });
    });
  });

  return app;
}

function agentOf(deps: RouteDeps, model: unknown): string {
  const { agents, defaultAgent } = deps.engine.routing;
  if (model === undefined || model === null || model === "") return defaultAgent;
  if (typeof model !== "string") throw badRequest("model must be a string");
  if (!agents.includes(model)) {
    throw new HttpError(
      404,
      "AGENT_NOT_FOUND",
      `no model ${JSON.stringify(model)}; models are the agents: ${agents.join(", ")}`,
    );
  }
  return model;
}

function lastUserText(messages: unknown): string {
  if (!Array.isArray(messages) || messages.length === 0)
    throw badRequest("messages must be a non-empty array");
  for (let i = messages.length - 1; i >= 0; i--) {
    const m: unknown = messages[i];
    if (typeof m !== "object" || m === null) throw badRequest("every message must be an object");
    const { role, content } = m as { role?: unknown; content?: unknown };
    if (role !== "user") continue;
    const text = contentText(content);
    if (text === "") throw badRequest("the last user message is empty");
    return text;
  }
  throw badRequest("messages has no user message");
}

function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((part: unknown) => {
        const p = part as { type?: unknown; text?: unknown };
        return p && p.type === "text" && typeof p.text === "string" ? p.text : "";
      })
      .join("");
  }
  throw badRequest("message content must be a string or an array of parts");
}

/** The peer address, or the first hop of the configured proxy header (only when one is configured). */
function clientIpOf(c: Context, trustProxyHeader: string | undefined): string {
  if (trustProxyHeader) {
    const first = c.req.header(trustProxyHeader)?.split(",")[0]?.trim();
    if (first) return normaliseIp(first);
  }
  const address = getConnInfo(c).remote.address;
  if (!address) throw new HttpError(500, "INTERNAL", "the client address is unknown");
  return normaliseIp(address);
}

function normaliseIp(ip: string): string {
  return ip.startsWith("::ffff:") && ip.includes(".") ? ip.slice("::ffff:".length) : ip;
}
