import type { Hono } from "hono";
import type { GatewayEnv } from "./types.js";

/**
 * The methods the app's routes answer on a path, for a 405 with an `Allow` header instead of a 404 when
 * the path exists under another method. Middleware (`ALL`, `*`) is not a route.
 */
export function allowedMethods(app: Hono<GatewayEnv>): (path: string) => string[] {
  const routes = app.routes
    .filter((r) => r.method !== "ALL" && r.path !== "*" && !r.path.endsWith("/*"))
    .map((r) => ({ method: r.method, pattern: patternOf(r.path) }));
  return (path) => [...new Set(routes.filter((r) => r.pattern.test(path)).map((r) => r.method))];
}

function patternOf(path: string): RegExp {
  const escaped = path
    .split("/")
    .map((segment) => (segment.startsWith(":") ? "[^/]+" : segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
    .join("/");
  return new RegExp(`^${escaped}/?$`);
}
