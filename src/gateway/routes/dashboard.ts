import { Hono } from "hono";
import { intQuery } from "../body.js";
import { overview } from "../overview.js";
import type { GatewayEnv, RouteDeps } from "../types.js";

/** What the dashboard needs besides the session routes: the agents to filter by, and the overview's charts. */
export function dashboardRoutes(deps: RouteDeps): Hono<GatewayEnv> {
  const { engine } = deps;
  const app = new Hono<GatewayEnv>();
  app.get("/api/agents", (c) =>
    c.json({ agents: engine.routing.agents, defaultAgent: engine.routing.defaultAgent }),
  );
  app.get("/api/stats/overview", async (c) => {
    const hours = intQuery(c, "hours", 1, 168) ?? 24;
    return c.json(await overview(engine, hours));
  });
  return app;
}
