import type { OpenAPIHono } from "@hono/zod-openapi";
import { MAX_WORK_SESSION_MINUTES } from "../../model/work-session.js";
import { keyFromPath, readJsonObject } from "../body.js";
import { existingKey } from "../existing-key.js";
import type { GatewayEnv, RouteDeps } from "../types.js";
import {
  bodyOf,
  createRoute,
  documentedRoutes,
  errorResponses,
  honoPath,
  jsonBody,
  jsonResponse,
  keyPathParams,
  requiredText,
  z,
} from "./openapi-kit.js";

const PREFIX = "/api/sessions/";

const startBody = z.object({
  agent: requiredText("agent"),
  // The range itself is the engine's check (its message names the limit too).
  minutes: z
    .number({ error: `minutes must be an integer from 1 to ${MAX_WORK_SESSION_MINUTES}` })
    .int({ error: `minutes must be an integer from 1 to ${MAX_WORK_SESSION_MINUTES}` })
    .nullish()
    .transform((minutes) => minutes ?? 30)
    .openapi({ minimum: 1, maximum: MAX_WORK_SESSION_MINUTES, default: 30 }),
});

/** The work-session routes as the document shows them; their schemas check each request. */
export const workSessionOperations = {
  start: createRoute({
    method: "post",
    path: "/api/sessions/{key}/work-session",
    summary: "Let an ask-first agent write without asking in this conversation, for minutes (default 30)",
    request: { params: keyPathParams, body: jsonBody(startBody) },
    responses: { 201: jsonResponse("{workSession}"), ...errorResponses },
  }),
  end: createRoute({
    method: "delete",
    path: "/api/sessions/{key}/work-session",
    summary: "End the agent's work session here",
    request: {
      params: keyPathParams,
      query: z.object({
        agent: z
          .string({ error: "agent is required (?agent=<name>)" })
          .min(1, "agent is required (?agent=<name>)"),
      }),
    },
    responses: { 200: jsonResponse("{ended}"), ...errorResponses },
  }),
};

/**
 * LoCrew's work sessions on a conversation: `POST …/work-session` `{agent, minutes?}` lets an ask-first
 * agent write without asking there (default 30 minutes), `DELETE …/work-session?agent=` ends it. Neither
 * clears a runtime session.
 */
export function workSessionRoutes(deps: RouteDeps): OpenAPIHono<GatewayEnv> {
  const { engine } = deps;
  const app = documentedRoutes();
  const existing = (key: string) => existingKey(engine, key);

  app.post(honoPath(workSessionOperations.start), async (c) => {
    const key = await existing(keyFromPath(c, PREFIX));
    const { agent, minutes } = bodyOf(startBody, await readJsonObject(c, deps.bodyLimit));
    return c.json({ workSession: await engine.agents.startWorkSession(agent, key, minutes) }, 201);
  });

  app.openapi(workSessionOperations.end, async (c) => {
    const key = await existing(keyFromPath(c, PREFIX));
    const { agent } = c.req.valid("query");
    return c.json({ ended: await engine.agents.workSessions.end(agent, key) });
  });

  return app;
}
