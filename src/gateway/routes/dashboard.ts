import { Hono } from "hono";
import { readHistory } from "../../cli/history.js";
import { EXPORT_FORMATS, type ExportFormat, exportSessions } from "../../export/index.js";
import { intQuery, keyFromPath } from "../body.js";
import { badRequest } from "../errors.js";
import { overview } from "../overview.js";
import type { GatewayEnv, RouteDeps } from "../types.js";

/** What the dashboard needs besides the session and agent routes: the overview's charts and exports. */
export function dashboardRoutes(deps: RouteDeps): Hono<GatewayEnv> {
  const { engine } = deps;
  const app = new Hono<GatewayEnv>();
  app.get("/api/stats/overview", async (c) => {
    const hours = intQuery(c, "hours", 1, 168) ?? 24;
    return c.json(await overview(engine, hours));
  });
  // The CLI's `sessions export`, over HTTP: the dashboard downloads what this answers.
  app.get("/api/sessions/:key/export", async (c) => {
    const key = keyFromPath(c, "/api/sessions/");
    const format = c.req.query("format") ?? "json";
    if (!(EXPORT_FORMATS as readonly string[]).includes(format)) {
      throw badRequest(`format must be one of ${EXPORT_FORMATS.join(", ")}`);
    }
    const all = c.req.query("all") === "true";
    const history = await readHistory(engine, key, { all });
    const text = exportSessions(format as ExportFormat, history.sessions, history.entries, {
      generations: all,
    });
    c.header("content-type", EXPORT_TYPES[format as ExportFormat]);
    return c.body(text);
  });
  return app;
}

const EXPORT_TYPES: Readonly<Record<ExportFormat, string>> = {
  json: "application/json; charset=utf-8",
  jsonl: "application/x-ndjson; charset=utf-8",
  md: "text/markdown; charset=utf-8",
};
