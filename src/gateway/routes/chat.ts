import type { Context } from "hono";
import { Hono } from "hono";
import type { EntryPoint, Envelope } from "../../model/envelope.js";
import { readJsonObject } from "../body.js";
import { describeError, HttpError } from "../errors.js";
import { sseReply } from "../sse.js";
import { runTurn, turnReply } from "../turn.js";
import type { GatewayEnv, RouteDeps } from "../types.js";
import { bodyOf } from "./checked.js";
import { turnSchemas } from "./schemas-on-demand.js";

/**
 * The endpoints that run a turn: web chat, the generic webhook, the App API and chat webhooks. Each names
 * its own session key through `engine.route` and its entry point (behaviours.md §1). Bodies are checked
 * with the schemas the OpenAPI document shows (routes/turn-operations.ts).
 */
export function chatRoutes(deps: RouteDeps): Hono<GatewayEnv> {
  const app = new Hono<GatewayEnv>();

  app.post("/api/chat", async (c) => {
    const { chatBody } = await turnSchemas();
    const body = bodyOf(chatBody, await readJsonObject(c, deps.bodyLimit));
    const { message: text, session_id: sessionId, agent, incognito } = body;
    const sender = body.sender ?? "admin";
    const envelope: Envelope = {
      ...(agent ? { agent } : {}),
      channel: "web",
      chat: { type: "direct", id: sessionId ?? "admin-session" },
      sender: { id: sender },
      text,
      entryPoint: { kind: "web_chat", ...(sessionId ? { sessionId } : {}) },
    };
    // Only the web chat names a sender that can be a listed human admin: the engine offers them the admin tools.
    return answer(c, deps, envelope, incognito);
  });

  app.post("/api/webhook", async (c) => {
    const { webhookBody } = await turnSchemas();
    const body = bodyOf(webhookBody, await readJsonObject(c, deps.bodyLimit));
    const { peer, message: text, subject_ref: subjectRef, agent, message_id: messageId, incognito } = body;
    const channel = body.channel ?? "webhook";
    // Every request past the auth middleware carried the gateway token.
    const entryPoint: EntryPoint = {
      kind: "webhook",
      gatewayToken: true,
      ...(subjectRef ? { subjectRef } : {}),
    };
    const envelope: Envelope = {
      ...(agent ? { agent } : {}),
      channel,
      chat: { type: "direct", id: peer },
      sender: { id: peer },
      text,
      ...(messageId ? { platformMessageId: messageId } : {}),
      entryPoint,
    };
    return answer(c, deps, envelope, incognito);
  });

  const app_api = async (c: Context<GatewayEnv>) => {
    const [user, sessionId] = rawSegments(c, "/api/app/");
    if (user === undefined) throw new HttpError(400, "INVALID_ARGUMENT", "the path names no user");
    const { appBody } = await turnSchemas();
    const { message: text, agent, incognito } = bodyOf(appBody, await readJsonObject(c, deps.bodyLimit));
    const envelope: Envelope = {
      ...(agent ? { agent } : {}),
      channel: "app_api",
      chat: { type: "direct", id: user },
      sender: { id: user },
      text,
      entryPoint: { kind: "app_api", user, ...(sessionId !== undefined ? { sessionId } : {}) },
    };
    return answer(c, deps, envelope, incognito);
  };
  app.post("/api/app/:user", app_api);
  app.post("/api/app/:user/:session", app_api);

  app.post("/api/hooks/:agent/:type", async (c) => {
    const [agent, type] = rawSegments(c, "/api/hooks/");
    if (agent === undefined || type === undefined)
      throw new HttpError(400, "INVALID_ARGUMENT", "bad hook path");
    if (!deps.engine.routing.agents.includes(agent)) {
      throw new HttpError(404, "AGENT_NOT_FOUND", `no agent named ${JSON.stringify(agent)}`);
    }
    // Any JSON object is a payload (its declared schema): nothing to check past readJsonObject.
    const body = await readJsonObject(c, deps.bodyLimit);
    const entity = entityOf(body);
    const text = typeof body.message === "string" && body.message ? body.message : JSON.stringify(body);
    const sender = typeof body.sender === "string" && body.sender ? body.sender : `hook:${type}`;
    return answer(c, deps, {
      agent,
      channel: "webhook",
      chat: { type: "direct", id: `${type}:${entity ?? "event"}` },
      sender: { id: sender },
      text,
      entryPoint: { kind: "chat_webhook", type, ...(entity ? { entity } : { at: Date.now() }) },
    });
  });

  return app;
}

/** A JSON reply, or an SSE stream (`delta` events, then `done` or `error`) when the client asks for one. */
async function answer(
  c: Context<GatewayEnv>,
  deps: RouteDeps,
  envelope: Envelope,
  incognito?: boolean,
): Promise<Response> {
  const flag = incognito ? { incognito } : {};
  if (wantsAsync(c)) {
    // Answered once the input is admitted (in the inbox); the turn runs on, GET /api/turns/{id} tells.
    const started = await deps.engine.start(envelope, { signal: deps.shutdownSignal, ...flag });
    c.header("Location", `/api/turns/${started.id}`);
    if (c.req.query("async") === undefined) c.header("Preference-Applied", "respond-async");
    return c.json({ id: started.id, key: started.key, session_id: started.key, state: "queued" }, 202);
  }
  if (!(c.req.header("accept") ?? "").includes("text/event-stream")) {
    // A bad key or agent is a plain 400 from the turn's own routing.
    return c.json(await turnReply(deps, await runTurn(deps, envelope, flag)));
  }
  // Routing first, so a bad key or agent is a plain 400 before the stream starts.
  deps.engine.route(envelope);
  return sseReply(c, async (stream) => {
    try {
      const result = await runTurn(deps, envelope, {
        ...flag,
        onText: (delta) => stream.writeSSE({ event: "delta", data: JSON.stringify({ text: delta }) }),
      });
      await stream.writeSSE({ event: "done", data: JSON.stringify(await turnReply(deps, result)) });
    } catch (error) {
      await stream.writeSSE({ event: "error", data: JSON.stringify(describeError(error).body) });
    }
  });
}

/** `Prefer: respond-async` (RFC 7240) or `?async=1`: answer 202 with the turn's id instead of waiting. */
function wantsAsync(c: Context<GatewayEnv>): boolean {
  const flag = c.req.query("async");
  if (flag !== undefined) return flag === "1" || flag === "true";
  return (c.req.header("prefer") ?? "")
    .split(",")
    .some((token) => token.trim().toLowerCase() === "respond-async");
}

/** Path segments after `prefix`, each percent-decoded exactly once (they become key parts, never paths). */
function rawSegments(c: Context, prefix: string): Array<string | undefined> {
  const url = new URL(c.req.url);
  const path = url.pathname.slice(prefix.length);
  return path.split("/").map((segment) => {
    try {
      const value = decodeURIComponent(segment);
      return value === "" ? undefined : value;
    } catch {
      throw new HttpError(400, "INVALID_ARGUMENT", "a path segment is not valid percent-encoding");
    }
  });
}

/** The object a chat webhook is about, from the common payload shapes; undefined names the event by time. */
function entityOf(body: Record<string, unknown>): string | undefined {
  const candidates: unknown[] = [
    body.entity,
    get(body, "object_attributes", "iid"),
    get(body, "pull_request", "number"),
    get(body, "merge_request", "iid"),
    get(body, "issue", "number"),
    get(body, "alert", "id"),
    body.fingerprint,
  ];
  for (const value of candidates) {
    if (typeof value === "string" && value !== "") return value;
    if (typeof value === "number" && Number.isFinite(value)) return String(value);
  }
  return undefined;
}

function get(body: Record<string, unknown>, field: string, inner: string): unknown {
  const value = body[field];
  return typeof value === "object" && value !== null ? (value as Record<string, unknown>)[inner] : undefined;
}
