import { Hono } from "hono";
import { MAX_WORK_SESSION_MINUTES } from "../../model/work-session.js";
import { sessionNotFound } from "../../store/session-log.js";
import { keyFromPath, readJsonObject, requiredString } from "../body.js";
import { badRequest } from "../errors.js";
import type { GatewayEnv, RouteDeps } from "../types.js";

const PREFIX = "/api/sessions/";

/**
 * LoCrew's work sessions on a conversation: `POST …/work-session` `{agent, minutes?}` lets an ask-first
 * agent write without asking there (default 30 minutes), `DELETE …/work-session?agent=` ends it. Neither
 * clears a runtime session.
 */
export function workSessionRoutes(deps: RouteDeps): Hono<GatewayEnv> {
  const { engine } = deps;
  const app = new Hono<GatewayEnv>();
  const existing = async (key: string) => {
    if (!(await engine.sessions.get(key))) throw sessionNotFound(key);
    return key;
  };

  app.post("/api/sessions/:key/work-session", async (c) => {
    const key = await existing(keyFromPath(c, PREFIX));
    const body = await readJsonObject(c, deps.bodyLimit);
    const minutes = body.minutes ?? 30;
    if (typeof minutes !== "number" || !Number.isInteger(minutes)) {
      throw badRequest(`minutes must be an integer from 1 to ${MAX_WORK_SESSION_MINUTES}`);
    }
    const workSession = engine.agents.startWorkSession(requiredString(body, "agent"), key, minutes);
    return c.json({ workSession }, 201);
  });

  app.delete("/api/sessions/:key/work-session", async (c) => {
    const key = await existing(keyFromPath(c, PREFIX));
    const agent = c.req.query("agent");
    if (!agent) throw badRequest("agent is required (?agent=<name>)");
    return c.json({ ended: engine.agents.workSessions.end(agent, key) });
  });

  return app;
}
