import type { OpenAPIHono } from "@hono/zod-openapi";
import type { GatewayEnv, RouteDeps } from "../types.js";
import { createRoute, documentedRoutes, jsonResponse } from "./openapi-kit.js";

export const healthOperations = {
  health: createRoute({
    method: "get",
    path: "/health",
    summary: "Liveness",
    security: [],
    responses: {
      200: jsonResponse("{status: ok | degraded, store, fallback?}"),
      503: jsonResponse("{status: shutting_down}"),
    },
  }),
};

export function healthRoutes(deps: RouteDeps): OpenAPIHono<GatewayEnv> {
  const app = documentedRoutes();
  app.openapi(healthOperations.health, (c) =>
    deps.shutdownSignal.aborted
      ? c.json({ status: "shutting_down" }, 503)
      : deps.storeFallback
        ? c.json({ status: "degraded", store: deps.engine.store.backend, fallback: deps.storeFallback }, 200)
        : c.json({ status: "ok", store: deps.engine.store.backend }, 200),
  );
  return app;
}
