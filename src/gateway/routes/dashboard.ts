import { Hono } from "hono";
import { readHistory } from "../../cli/history.js";
import { type ExportFormat, exportSessions } from "../../export/index.js";
import { incognitoRefusal } from "../../incognito/errors.js";
import { keyFromPath } from "../body.js";
import { overview } from "../overview.js";
import type { GatewayEnv, RouteDeps } from "../types.js";
import { queryOf } from "./checked.js";
import { dashboardSchemas } from "./schemas-on-demand.js";

/**
 * What the dashboard needs besides the session and agent routes: the overview's charts and exports. Their
 * queries are checked with the schemas the OpenAPI document shows (routes/dashboard-operations.ts).
 */
export function dashboardRoutes(deps: RouteDeps): Hono<GatewayEnv> {
  const { engine } = deps;
  const app = new Hono<GatewayEnv>();
  app.get("/api/stats/overview", async (c) => {
    const { overviewQuery } = await dashboardSchemas();
    const { hours = 24 } = queryOf(overviewQuery, c.req.query());
    return c.json(await overview(engine, hours));
  });
  // The CLI's `sessions export`, over HTTP: the dashboard downloads what this answers.
  app.get("/api/sessions/:key/export", async (c) => {
    const key = keyFromPath(c, "/api/sessions/");
    if (engine.isIncognito(key)) throw incognitoRefusal(key, "exported");
    const { exportQuery } = await dashboardSchemas();
    const query = queryOf(exportQuery, c.req.query());
    const format = query.format ?? "json";
    const all = query.all === "true";
    const history = await readHistory(engine, key, { all });
    const text = exportSessions(format, history.sessions, history.entries, { generations: all });
    c.header("content-type", EXPORT_TYPES[format]);
    return c.body(text);
  });
  return app;
}

const EXPORT_TYPES: Readonly<Record<ExportFormat, string>> = {
  json: "application/json; charset=utf-8",
  jsonl: "application/x-ndjson; charset=utf-8",
  md: "text/markdown; charset=utf-8",
};
