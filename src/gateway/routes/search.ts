import { Hono } from "hono";
import { searchQueryFrom } from "../../search/query-params.js";
import { searchStore } from "../../search/searchable.js";
import type { GatewayEnv, RouteDeps } from "../types.js";

/** `GET /api/search?q=…&agent&channel&prefix&role&since&until&archived&limit&cursor`: what was said, best first. */
export function searchRoutes(deps: RouteDeps): Hono<GatewayEnv> {
  const app = new Hono<GatewayEnv>();
  app.get("/api/search", async (c) => {
    const query = searchQueryFrom(c.req.query("q") ?? "", (name) => c.req.query(name));
    return c.json(await searchStore(deps.engine.store, query));
  });
  return app;
}
