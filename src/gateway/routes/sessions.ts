import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Session } from "../../model/session.js";
import type { SessionQuery } from "../../store/store.js";
import { keyFromPath } from "../body.js";
import { HttpError } from "../errors.js";
import { searchSessions } from "../session-search.js";
import type { GatewayEnv, RouteDeps } from "../types.js";
import {
  createRoute,
  documentedRoutes,
  errorResponses,
  intQueryParam,
  jsonResponse,
  keyPathParams,
  textQueryParam,
  z,
} from "./openapi-kit.js";

const PREFIX = "/api/sessions/";

/** The session routes as the OpenAPI document shows them; their schemas check each request. */
export const sessionOperations = {
  list: createRoute({
    method: "get",
    path: "/api/sessions",
    summary: "List sessions",
    request: {
      query: z.object({
        agent: textQueryParam(),
        channel: textQueryParam(),
        active: intQueryParam("active", 1, 10_000_000, "only sessions active in the last <active> minutes"),
        sort: z
          .enum(["created", "activity", ""], { error: "sort must be created or activity" })
          .optional()
          .openapi({ type: "string", enum: ["created", "activity"] }),
        limit: intQueryParam("limit", 1, 1000),
        cursor: textQueryParam("the next page: the nextCursor of the previous one"),
        archived: textQueryParam("true: include archived generations"),
        q: z
          .string()
          .max(200, { error: "q must be at most 200 characters" })
          .optional()
          .openapi({ description: "match title, key, agent or channel (at most 200 characters)" }),
      }),
    },
    responses: { 200: jsonResponse("{sessions, nextCursor?}"), ...errorResponses },
  }),
  get: createRoute({
    method: "get",
    path: "/api/sessions/{key}",
    summary: "One session",
    request: { params: keyPathParams },
    responses: {
      200: jsonResponse("{session, queued, runtimeSessions, cost, needsAttention}"),
      ...errorResponses,
    },
  }),
  history: createRoute({
    method: "get",
    path: "/api/sessions/{key}/history",
    summary: "History of a session",
    request: {
      params: keyPathParams,
      query: z.object({
        limit: intQueryParam("limit", 1, 100_000),
        before: intQueryParam("before", 1, Number.MAX_SAFE_INTEGER),
        all: textQueryParam("true, 1 or empty: include archived generations"),
        before_session: textQueryParam(
          "with all: the generation (session id) before counts in; older generations follow (the next page back)",
        ),
      }),
    },
    responses: { 200: jsonResponse("{key, entries}"), ...errorResponses },
  }),
  compact: createRoute({
    method: "post",
    path: "/api/sessions/{key}/compact",
    summary: "Compact now",
    request: { params: keyPathParams },
    responses: {
      200: jsonResponse("{summary, entry}"),
      ...errorResponses,
      409: jsonResponse("Nothing to compact"),
    },
  }),
  reset: createRoute({
    method: "post",
    path: "/api/sessions/{key}/reset",
    summary: "Archive and start anew",
    request: { params: keyPathParams },
    responses: { 200: jsonResponse("{archived, current}"), ...errorResponses },
  }),
  delete: createRoute({
    method: "delete",
    path: "/api/sessions/{key}",
    summary: "Delete every generation of a key",
    request: { params: keyPathParams },
    responses: { 200: jsonResponse("{deleted}"), ...errorResponses },
  }),
};

export function sessionRoutes(deps: RouteDeps): OpenAPIHono<GatewayEnv> {
  const { engine } = deps;
  const app = documentedRoutes();

  app.openapi(sessionOperations.list, async (c) => {
    const params = c.req.valid("query");
    const query: SessionQuery = {};
    if (params.agent) query.agent = params.agent;
    if (params.channel) query.channel = params.channel;
    if (params.sort) query.sort = params.sort;
    if (params.active !== undefined) query.activeSince = Date.now() - params.active * 60_000;
    if (params.limit !== undefined) query.limit = params.limit;
    if (params.cursor) query.cursor = params.cursor;
    if (params.archived === "true") query.includeArchived = true;
    const text = params.q?.trim();
    if (text) return c.json(await searchSessions(engine, query, text));
    const page = await engine.sessions.list(query);
    const attention = await engine.agents.store.attentionKeys();
    const sessions = page.sessions.map((s) => marked(engine, s, attention.has(s.key)));
    return c.json({ sessions, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) });
  });

  app.openapi(sessionOperations.get, async (c) => {
    const key = keyFromPath(c, PREFIX);
    const session = await engine.sessions.get(key);
    if (!session) throw notFound(key);
    const runtimes = await engine.agents.conversation(key);
    return c.json({
      session: marked(engine, session, false),
      queued: engine.queued().get(key) ?? 0,
      ...runtimes,
    });
  });

  app.openapi(sessionOperations.history, async (c) => {
    const key = keyFromPath(c, PREFIX);
    const { limit, before, all, before_session } = c.req.valid("query");
    const entries = await engine.history(key, {
      ...(limit !== undefined ? { limit } : {}),
      ...(before !== undefined ? { before } : {}),
      ...(before_session ? { beforeSession: before_session } : {}),
      ...(all === "true" || all === "1" || all === "" ? { includeArchived: true } : {}),
    });
    return c.json({ key, entries });
  });

  app.openapi(sessionOperations.compact, async (c) => {
    const key = keyFromPath(c, PREFIX);
    const result = await engine.compact(key, { signal: deps.shutdownSignal });
    return c.json({ summary: result.summary, entry: result.entry });
  });

  app.openapi(sessionOperations.reset, async (c) => {
    const key = keyFromPath(c, PREFIX);
    if (!(await engine.sessions.get(key))) throw notFound(key);
    const result = await engine.reset(key, "api");
    return c.json({ archived: result.archived, current: result.current });
  });

  app.openapi(sessionOperations.delete, async (c) => {
    const key = keyFromPath(c, PREFIX);
    const result = await engine.delete(key);
    return c.json({ deleted: result });
  });

  return app;
}

/** A listed session with what the list marks: needs attention, incognito (kept in memory only). */
function marked(engine: RouteDeps["engine"], session: Session, needsAttention: boolean) {
  const incognito = engine.isIncognito(session.key);
  if (!needsAttention && !incognito) return session;
  return { ...session, ...(needsAttention ? { needsAttention } : {}), ...(incognito ? { incognito } : {}) };
}

function notFound(key: string): HttpError {
  // The engine's phrase, so REST, WebSocket and CLI say the same thing.
  return new HttpError(404, "SESSION_NOT_FOUND", `no session for key ${JSON.stringify(key)}`);
}
