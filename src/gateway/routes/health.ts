import { Hono } from "hono";
import type { GatewayEnv, RouteDeps } from "../types.js";

export function healthRoutes(deps: RouteDeps): Hono<GatewayEnv> {
  const app = new Hono<GatewayEnv>();
  app.get("/health", (c) =>
    deps.shutdownSignal.aborted
      ? c.json({ status: "shutting_down" }, 503)
      : deps.storeFallback
        ? c.json({ status: "degraded", store: deps.engine.store.backend, fallback: deps.storeFallback })
        : c.json({ status: "ok", store: deps.engine.store.backend }),
  );
  return app;
}
