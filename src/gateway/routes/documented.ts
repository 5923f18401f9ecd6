import { Hono } from "hono";
import type { GatewayMetrics } from "../metrics/recorder.js";
import type { GatewayEnv, RouteDeps } from "../types.js";
import { agentRoutes } from "./agents.js";
import { costRoutes } from "./cost.js";
import { healthRoutes } from "./health.js";
import { inspectRoutes } from "./inspect.js";
import { metricsRoutes } from "./metrics.js";
import { searchRoutes } from "./search.js";
import { branchRoutes } from "./session-branches.js";
import { sessionRoutes } from "./sessions.js";
import { shareRoutes } from "./shares.js";
import { subjectRoutes } from "./subjects.js";
import { workSessionRoutes } from "./work-sessions.js";

/**
 * The routes declared with zod schemas, as one app the gateway hands their requests to (loaded on the first
 * one). Its errors are thrown on to the gateway's error handler, so they keep the gateway's shape and log.
 */
export function documentedApp(deps: RouteDeps, metrics: GatewayMetrics): Hono<GatewayEnv> {
  const app = new Hono<GatewayEnv>();
  app.route("/", healthRoutes(deps));
  app.route("/", sessionRoutes(deps));
  app.route("/", branchRoutes(deps));
  app.route("/", searchRoutes(deps));
  app.route("/", agentRoutes(deps));
  app.route("/", inspectRoutes(deps));
  app.route("/", metricsRoutes(deps, metrics));
  app.route("/", workSessionRoutes(deps));
  app.route("/", shareRoutes(deps));
  app.route("/", subjectRoutes(deps));
  app.route("/", costRoutes(deps));
  app.onError((error) => {
    throw error;
  });
  app.notFound((c) => {
    throw new Error(`documented routes: none for ${c.req.method} ${c.req.path}`);
  });
  return app;
}
