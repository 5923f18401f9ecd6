import { Hono } from "hono";
import { HttpError } from "../errors.js";
import type { GatewayEnv, RouteDeps } from "../types.js";

/**
 * A turn's state and result by id (an asynchronous turn's 202 names it), and stopping one. Declared in
 * routes/turn-operations.ts; the id is any string, so there is nothing to check.
 */
export function turnRoutes(deps: RouteDeps): Hono<GatewayEnv> {
  const app = new Hono<GatewayEnv>();
  app.get("/api/turns/:id", async (c) => {
    const id = c.req.param("id");
    const status = await deps.engine.turnStatus(id);
    if (!status) throw new HttpError(404, "NOT_FOUND", `no turn ${JSON.stringify(id)}`);
    if (status.state === "evicted") {
      throw new HttpError(
        410,
        "RESULT_EVICTED",
        `the result of turn ${JSON.stringify(id)} was dropped to keep within turns.results_max_bytes; its reply is in the session's history`,
      );
    }
    return c.json(status);
  });
  app.post("/api/turns/:id/abort", (c) => {
    const id = c.req.param("id");
    const done = deps.engine.abort(id);
    if (!done) throw new HttpError(404, "NOT_FOUND", `no queued or running turn ${JSON.stringify(id)}`);
    return c.json({ id, [done]: true });
  });
  return app;
}
