import type { OpenAPIHono } from "@hono/zod-openapi";
import type { GatewayMetrics } from "../metrics/recorder.js";
import type { GatewayEnv, RouteDeps } from "../types.js";
import { createRoute, documentedRoutes, z } from "./openapi-kit.js";

export const metricsOperations = {
  metrics: createRoute({
    method: "get",
    path: "/metrics",
    summary: "Prometheus metrics",
    responses: {
      200: {
        description: "text exposition format",
        content: { "text/plain": { schema: z.string() } },
      },
    },
  }),
};

export function metricsRoutes(_deps: RouteDeps, metrics: GatewayMetrics): OpenAPIHono<GatewayEnv> {
  const app = documentedRoutes();
  app.openapi(metricsOperations.metrics, async (c) => {
    const registry = await metrics.load();
    return c.text(await registry.metrics(), 200, { "content-type": registry.contentType });
  });
  return app;
}
