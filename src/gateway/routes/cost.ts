import type { OpenAPIHono } from "@hono/zod-openapi";
import { costQueryFrom, costReport } from "../../ledger/report.js";
import type { GatewayEnv, RouteDeps } from "../types.js";
import {
  createRoute,
  documentedRoutes,
  errorResponses,
  jsonResponse,
  textQueryParam,
  z,
} from "./openapi-kit.js";

/** The cost ledger's totals (src/ledger). */
export const costOperations = {
  cost: createRoute({
    method: "get",
    path: "/api/cost",
    summary:
      "Totals of the cost ledger (every model call: turns, tool rounds, compaction, titles) per session, agent or UTC day; " +
      "they survive a session's reset, deletion and erasure",
    request: {
      query: z.object({
        by: textQueryParam("session, agent or day (default day)"),
        since: textQueryParam("only calls at or after this time: an ISO 8601 date or ms since the epoch"),
      }),
    },
    responses: {
      200: jsonResponse(
        "{by, since?, groups: [{group, calls, usd, unpricedCalls, inputTokens, outputTokens, cacheReadTokens, " +
          "cacheWriteTokens}], total: (the same, group all), lowerBound} — usd null: no call of the group has a known " +
          "price (unknown, never 0); unpricedCalls > 0: usd is a lower bound",
      ),
      ...errorResponses,
    },
  }),
};

/** `GET /api/cost?by=session|agent|day&since=…`. */
export function costRoutes(deps: RouteDeps): OpenAPIHono<GatewayEnv> {
  const app = documentedRoutes();
  app.openapi(costOperations.cost, async (c) => {
    const { by, since } = c.req.valid("query");
    return c.json(await costReport(deps.engine.agents.ledger, costQueryFrom(by, since)));
  });
  return app;
}
