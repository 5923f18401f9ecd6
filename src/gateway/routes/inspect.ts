import type { OpenAPIHono } from "@hono/zod-openapi";
import { HttpError } from "../errors.js";
import type { GatewayEnv, RouteDeps } from "../types.js";
import {
  createRoute,
  documentedRoutes,
  errorResponses,
  intQueryParam,
  jsonResponse,
  textQueryParam,
  z,
} from "./openapi-kit.js";
import { turnOperations } from "./turn-operations.js";

export const inspectOperations = {
  inspect: createRoute({
    method: "get",
    path: "/api/inspect",
    summary: "Context size, tokens, last compaction, queued turns per session; the queued inputs",
    request: {
      query: z.object({
        limit: intQueryParam("limit", 1, 1000, "sessions per page (default 100)"),
        cursor: textQueryParam("the next page: the nextCursor of the previous one"),
      }),
    },
    responses: {
      200: jsonResponse(
        "{sessions, queuedTotal, queued: [{id, key, agent, preview, mode, admittedAt}], running: [{id, key, startedAt, lastEventAt, events, stuck}], nextCursor?}",
      ),
      ...errorResponses,
    },
  }),
};

/**
 * Per active session: context size, tokens, the last compaction and queued turns (behaviours.md §8); the
 * inputs waiting by queue mode, each cancellable.
 */
export function inspectRoutes(deps: RouteDeps): OpenAPIHono<GatewayEnv> {
  const { engine } = deps;
  const app = documentedRoutes();
  app.openapi(inspectOperations.inspect, async (c) => {
    const { limit = 100, cursor } = c.req.valid("query");
    const page = await engine.sessions.list({ sort: "activity", limit, ...(cursor ? { cursor } : {}) });
    const queued = engine.queued();
    const sessions = await Promise.all(
      page.sessions.map(async (session) => {
        const context = await engine.context(session.key);
        const contextTokens = (context?.entries ?? []).reduce(
          (sum, entry) => sum + (entry.type === "message" ? Math.ceil(entry.content.length / 4) : 0),
          context?.summary ? Math.ceil(context.summary.summary.length / 4) : 0,
        );
        return {
          key: session.key,
          agent: session.agent,
          channel: session.channel,
          entries: session.entryCount,
          messages: session.messageCount,
          approxTokens: session.approxTokens,
          context: {
            entries: context?.entries.length ?? 0,
            approxTokens: contextTokens,
            fromSeq: session.contextFromSeq,
          },
          lastCompaction: context?.summary
            ? { at: context.summary.ts, seq: context.summary.seq, throughSeq: context.summary.throughSeq }
            : null,
          queuedTurns: queued.get(session.key) ?? 0,
          lastActivityAt: session.lastActivityAt,
        };
      }),
    );
    let queuedTotal = 0;
    for (const n of queued.values()) queuedTotal += n;
    return c.json({
      sessions,
      queuedTotal,
      // Inputs waiting for their session's turn, by id: `DELETE /api/turns/{id}` cancels one.
      queued: engine.queue.list(),
      // Turns running, `stuck` past turns.stuck_after without a runtime event: `POST /api/turns/{id}/abort`.
      running: engine.running(),
      ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}),
    });
  });
  // Declared with the other routes of a turn by id (turn-operations.ts).
  app.openapi(turnOperations.cancel, (c) => {
    const { id } = c.req.valid("param");
    if (!engine.queue.cancel(id)) {
      throw new HttpError(404, "NOT_FOUND", `no queued turn ${JSON.stringify(id)} (it may have started)`);
    }
    return c.json({ id, cancelled: true });
  });
  return app;
}
