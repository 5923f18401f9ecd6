import type { OpenAPIHono } from "@hono/zod-openapi";
import type { GatewayEnv, RouteDeps } from "../types.js";
import { createRoute, documentedRoutes, jsonResponse } from "./openapi-kit.js";

export const healthOperations = {
  health: createRoute({
    method: "get",
    path: "/health",
    summary: "Readiness: 503 while degraded (on the memory fallback) or shutting down",
    security: [],
    responses: {
      200: jsonResponse("{status: ok, store, channels?: [{channel, state, since, error?, failures}]}"),
      503: jsonResponse("{status: degraded | shutting_down, store?, fallback?, channels?}"),
    },
  }),
  live: createRoute({
    method: "get",
    path: "/health/live",
    summary: "Liveness: 200 while the process serves requests, degraded or not",
    security: [],
    responses: { 200: jsonResponse("{status: alive}") },
  }),
};

export function healthRoutes(deps: RouteDeps): OpenAPIHono<GatewayEnv> {
  const app = documentedRoutes();
  app.openapi(healthOperations.health, (c) => {
    if (deps.shutdownSignal.aborted) return c.json({ status: "shutting_down" }, 503);
    // A platform's outage is shown but does not make the gateway unhealthy: REST and the other channels work.
    const channels = deps.channelStates ? { channels: deps.channelStates.list() } : {};
    const store = deps.engine.store.backend;
    // Degraded answers 503 so that a load balancer routes around it; /health/live stays 200.
    return deps.storeFallback
      ? c.json({ status: "degraded", store, fallback: deps.storeFallback, ...channels }, 503)
      : c.json({ status: "ok", store, ...channels }, 200);
  });
  app.openapi(healthOperations.live, (c) => c.json({ status: "alive" }, 200));
  return app;
}
