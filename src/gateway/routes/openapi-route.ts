import { Hono } from "hono";
import type { GatewayEnv } from "../types.js";

/** `GET /api/openapi.json`: the generator and the routes' schemas load on the first request, not at start-up. */
export function openApiRoutes(): Hono<GatewayEnv> {
  const app = new Hono<GatewayEnv>();
  app.get("/api/openapi.json", async (c) => {
    const { openApiDocument } = await import("./openapi.js");
    return c.json(openApiDocument());
  });
  return app;
}
