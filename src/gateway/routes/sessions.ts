import { Hono } from "hono";
import type { SessionQuery } from "../../store/store.js";
import { intQuery, keyFromPath } from "../body.js";
import { badRequest, HttpError } from "../errors.js";
import { searchSessions } from "../session-search.js";
import type { GatewayEnv, RouteDeps } from "../types.js";

const PREFIX = "/api/sessions/";

export function sessionRoutes(deps: RouteDeps): Hono<GatewayEnv> {
  const { engine } = deps;
  const app = new Hono<GatewayEnv>();

  app.get("/api/sessions", async (c) => {
    const query: SessionQuery = {};
    const agent = c.req.query("agent");
    const channel = c.req.query("channel");
    const sort = c.req.query("sort");
    const cursor = c.req.query("cursor");
    if (agent) query.agent = agent;
    if (channel) query.channel = channel;
    if (sort !== undefined && sort !== "") {
      if (sort !== "created" && sort !== "activity") throw badRequest("sort must be created or activity");
      query.sort = sort;
    }
    const active = intQuery(c, "active", 1, 10_000_000);
    if (active !== undefined) query.activeSince = Date.now() - active * 60_000;
    const limit = intQuery(c, "limit", 1, 1000);
    if (limit !== undefined) query.limit = limit;
    if (cursor) query.cursor = cursor;
    if (c.req.query("archived") === "true") query.includeArchived = true;
    const text = c.req.query("q")?.trim();
    if (text) {
      if (text.length > 200) throw badRequest("q must be at most 200 characters");
      const found = await searchSessions(engine, query, text);
      return c.json(found);
    }
    const page = await engine.sessions.list(query);
    const attention = await engine.agents.store.attentionKeys();
    const sessions = page.sessions.map((s) => (attention.has(s.key) ? { ...s, needsAttention: true } : s));
    return c.json({ sessions, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) });
  });

  app.get("/api/sessions/:key", async (c) => {
    const key = keyFromPath(c, PREFIX);
    const session = await engine.sessions.get(key);
    if (!session) throw notFound(key);
    const runtimes = await engine.agents.conversation(key);
    return c.json({ session, queued: engine.queued().get(key) ?? 0, ...runtimes });
  });

  app.get("/api/sessions/:key/history", async (c) => {
    const key = keyFromPath(c, PREFIX);
    const limit = intQuery(c, "limit", 1, 100_000);
    const before = intQuery(c, "before", 1, Number.MAX_SAFE_INTEGER);
    const all = c.req.query("all");
    const entries = await engine.history(key, {
      ...(limit !== undefined ? { limit } : {}),
      ...(before !== undefined ? { before } : {}),
      ...(all === "true" || all === "1" || all === "" ? { includeArchived: true } : {}),
    });
    return c.json({ key, entries });
  });

  app.post("/api/sessions/:key/compact", async (c) => {
    const key = keyFromPath(c, PREFIX);
    const result = await engine.compact(key, { signal: deps.shutdownSignal });
    return c.json({ summary: result.summary, entry: result.entry });
  });

  app.post("/api/sessions/:key/reset", async (c) => {
    const key = keyFromPath(c, PREFIX);
    if (!(await engine.sessions.get(key))) throw notFound(key);
    const result = await engine.reset(key, "api");
    return c.json({ archived: result.archived, current: result.current });
  });

  app.delete("/api/sessions/:key", async (c) => {
    const key = keyFromPath(c, PREFIX);
    const result = await engine.delete(key);
    return c.json({ deleted: result });
  });

  return app;
}

function notFound(key: string): HttpError {
  // The engine's phrase, so REST, WebSocket and CLI say the same thing.
  return new HttpError(404, "SESSION_NOT_FOUND", `no session for key ${JSON.stringify(key)}`);
}
