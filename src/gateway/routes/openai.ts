import { getConnInfo } from "@hono/node-server/conninfo";
import type { Context } from "hono";
import { Hono } from "hono";
import { ulid } from "ulid";
import type { Envelope } from "../../model/envelope.js";
import { readJsonObject } from "../body.js";
import { describeError, HttpError } from "../errors.js";
import { parseChatCompletion, SESSION_HEADER } from "../openai-request.js";
import { sseReply } from "../sse.js";
import { runTurn } from "../turn.js";
import type { GatewayEnv, RouteDeps } from "../types.js";
import { bodyOf } from "./checked.js";
import { openAiSchemas } from "./schemas-on-demand.js";

/**
 * The OpenAI-compatible API. Agents are the models. The session is `openai-compat:<client IP>`, or
 * `openai-compat:<client IP>:<name>` when the request names one (`X-Sessiond-Session`, else `user`). The
 * stored history is authoritative: the request's last user message is the turn's input, and its earlier
 * messages only decide whether the turn continues the stored conversation or starts a new generation.
 * Declared in routes/openai-operations.ts, whose schema checks the body.
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
    const { completionBody } = await openAiSchemas();
    const request = parseChatCompletion(
      bodyOf(completionBody, await readJsonObject(c, deps.bodyLimit)),
      c.req.header(SESSION_HEADER),
    );
    const agent = agentOf(deps, request.model);
    const { text, session } = request;
    const flag = request.incognito ? { incognito: true } : {};
    const clientIp = clientIpOf(c, deps.trustProxyHeader);
    const envelope: Envelope = {
      agent,
      channel: "openai",
      chat: { type: "direct", id: clientIp },
      sender: { id: clientIp },
      text,
      entryPoint: { kind: "openai_compat", clientIp, ...(session ? { session } : {}) },
      clientHistory: request.history,
    };
    deps.engine.route(envelope);
    const id = `chatcmpl-${ulid()}`;
    const created = Math.floor(Date.now() / 1000);
    if (!request.stream) {
      const result = await runTurn(deps, envelope, flag);
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
          ...flag,
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

function agentOf(deps: RouteDeps, model: string | undefined): string {
  const { agents, defaultAgent } = deps.engine.routing;
  if (model === undefined || model === "") return defaultAgent;
  if (!agents.includes(model)) {
    throw new HttpError(
      404,
      "AGENT_NOT_FOUND",
      `no model ${JSON.stringify(model)}; models are the agents: ${agents.join(", ")}`,
    );
  }
  return model;
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
