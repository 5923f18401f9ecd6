import { Hono } from "hono";
import type { AgentRuntimeSettings } from "../../runtimes/agents.js";
import { readJsonObject, requiredString } from "../body.js";
import { badRequest } from "../errors.js";
import type { GatewayEnv, RouteDeps } from "../types.js";

/**
 * What a token holder may change over HTTP. Not `executable` or `url`: a program to run or a server to send
 * conversations to is set in sessiond.yaml or with the local CLI, never by a request.
 */
const EDITABLE: ReadonlyArray<keyof AgentRuntimeSettings> = [
  "runtime",
  "cwd",
  "model",
  "instructions",
  "permission",
  "selfCompact",
  "selfCompactWindow",
];

/**
 * Agents: their settings, runtime and cost (`GET /api/agents`), edits (`PATCH`: a new `cwd` clears the
 * agent's runtime sessions and answers with the notice), duplicates without sessions, deletion.
 */
export function agentRoutes(deps: RouteDeps): Hono<GatewayEnv> {
  const { agents } = deps.engine;
  const app = new Hono<GatewayEnv>();

  app.get("/api/agents", async (c) =>
    c.json({ agents: await agents.list(), defaultAgent: deps.engine.routing.defaultAgent }),
  );

  app.get("/api/agents/:name", async (c) => c.json({ agent: await agents.get(c.req.param("name")) }));

  app.patch("/api/agents/:name", async (c) => {
    const body = await readJsonObject(c, deps.bodyLimit);
    const patch: Partial<Record<keyof AgentRuntimeSettings, string | null>> = {};
    for (const [field, value] of Object.entries(body)) {
      if (!EDITABLE.includes(field as keyof AgentRuntimeSettings)) {
        throw badRequest(`unknown agent setting ${JSON.stringify(field)} (editable: ${EDITABLE.join(", ")})`);
      }
      if (typeof value === "number" && field === "selfCompactWindow") {
        patch.selfCompactWindow = String(value);
        continue;
      }
      if (value !== null && typeof value !== "string") throw badRequest(`${field} must be a string or null`);
      patch[field as keyof AgentRuntimeSettings] = value;
    }
    return c.json(await agents.update(c.req.param("name"), patch));
  });

  app.post("/api/agents/:name/duplicate", async (c) => {
    const body = await readJsonObject(c, deps.bodyLimit);
    const agent = await agents.duplicate(c.req.param("name"), requiredString(body, "name"));
    return c.json({ agent }, 201);
  });

  app.delete("/api/agents/:name", async (c) => {
    const name = c.req.param("name");
    await agents.delete(name);
    return c.json({ deleted: name });
  });

  return app;
}
