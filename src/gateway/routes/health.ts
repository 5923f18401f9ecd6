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
      200: jsonResponse(
        "{status: ok | degraded, store, fallback?, channels?: [{channel, state, since, error?}]}",
      ),
      503: jsonResponse("{status: shutting_down}"),
    },
  }),
};

export function healthRoutes(deps: RouteDeps): OpenAPIHono<GatewayEnv> {
  const app = documentedRoutes();
  app.openapi(healthOperations.health, (c) => {
    if (deps.shutdownSignal.aborted) return c.json({ status: "shutting_down" }, 503);
    // A platform's outage is shown but does not make the gateway unhealthy: REST and the other channels work.
    const channels = deps.channelStates ? { channels: deps.channelStates.list() } : {};
    const store = deps.engine.store.backend;
    return deps.storeFallback
      ? c.json({ status: "degraded", store, fallback: deps.storeFallback, ...channels }, 200)
      : c.json({ status: "ok", store, ...channels }, 200);
  });
  return app;
}
