import type { OpenAPIHono } from "@hono/zod-openapi";
import { SEARCH_PARAMS, searchQueryFrom } from "../../search/query-params.js";
import { searchStore } from "../../search/searchable.js";
import type { GatewayEnv, RouteDeps } from "../types.js";
import {
  createRoute,
  documentedRoutes,
  errorResponses,
  jsonResponse,
  textQueryParam,
  z,
} from "./openapi-kit.js";

/** The search route as the document shows it; the values' own rules are `normaliseSearch`'s. */
export const searchOperations = {
  search: createRoute({
    method: "get",
    path: "/api/search",
    summary: "Search what was said (user and assistant messages), best first",
    request: {
      query: z.object({
        q: z.string({ error: "the search text is empty" }).openapi({ description: "the search text" }),
        ...Object.fromEntries(SEARCH_PARAMS.map((name) => [name, textQueryParam()])),
      }),
    },
    responses: {
      200: jsonResponse(
        "{hits: [{key, sessionId, generation, archived, seq, role, ts, agent, channel, snippet, inheritedBy?: [{key, sessionId}]}], nextCursor?, indexing, complete} (complete: false when the search ran out of its time budget: the hits are the best of what it read; inheritedBy: the forks whose history includes the message)",
      ),
      ...errorResponses,
    },
  }),
};

/** `GET /api/search?q=…&agent&channel&prefix&role&since&until&archived&limit&cursor`: what was said, best first. */
export function searchRoutes(deps: RouteDeps): OpenAPIHono<GatewayEnv> {
  const app = documentedRoutes();
  app.openapi(searchOperations.search, async (c) => {
    const query = searchQueryFrom(c.req.valid("query").q, (name) => c.req.query(name));
    return c.json(await searchStore(deps.engine.store, query));
  });
  return app;
}
