import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AgentRuntimeSettings } from "../../runtimes/agents.js";
import { readJsonObject } from "../body.js";
import type { GatewayEnv, RouteDeps } from "../types.js";
import {
  bodyOf,
  createRoute,
  documentedRoutes,
  errorResponses,
  honoPath,
  jsonBody,
  jsonResponse,
  namePathParams,
  pathParam,
  requiredText,
  z,
} from "./openapi-kit.js";

/**
 * What a token holder may change over HTTP. Not `executable` or `url`: a program to run or a server to send
 * conversations to is set in sessiond.yaml or with the local CLI, never by a request.
 */
const EDITABLE = [
  "runtime",
  "cwd",
  "model",
  "instructions",
  "permission",
  "selfCompact",
  "selfCompactWindow",
] as const satisfies ReadonlyArray<keyof AgentRuntimeSettings>;

const setting = (field: string) =>
  z
    .string({ error: `${field} must be a string or null` })
    .nullable()
    .optional();

const agentPatch = z.strictObject(
  {
    runtime: setting("runtime"),
    cwd: setting("cwd"),
    model: setting("model"),
    instructions: setting("instructions"),
    permission: setting("permission"),
    selfCompact: setting("selfCompact"),
    selfCompactWindow: z
      .union([z.string(), z.number()], { error: "selfCompactWindow must be a string or null" })
      .nullable()
      .optional()
      .transform((value) => (typeof value === "number" ? String(value) : value)),
  } satisfies Record<(typeof EDITABLE)[number], z.ZodType>,
  {
    error: (issue) =>
      issue.code === "unrecognized_keys"
        ? `unknown agent setting ${JSON.stringify(issue.keys[0])} (editable: ${EDITABLE.join(", ")})`
        : undefined,
  },
);

const duplicateBody = z.object({ name: requiredText("name") });

/** The agent routes as the document shows them; their schemas check each request. */
export const agentOperations = {
  list: createRoute({
    method: "get",
    path: "/api/agents",
    summary: "Agents with their runtime, settings and cost totals, and the default agent",
    responses: { 200: jsonResponse("{agents, defaultAgent}") },
  }),
  get: createRoute({
    method: "get",
    path: "/api/agents/{name}",
    summary: "One agent",
    request: { params: namePathParams },
    responses: { 200: jsonResponse("{agent}"), ...errorResponses },
  }),
  patch: createRoute({
    method: "patch",
    path: "/api/agents/{name}",
    summary: "Edit settings; a new cwd clears the agent's runtime sessions",
    request: { params: namePathParams, body: jsonBody(agentPatch) },
    responses: { 200: jsonResponse("{agent, cleared, notice?}"), ...errorResponses },
  }),
  duplicate: createRoute({
    method: "post",
    path: "/api/agents/{name}/duplicate",
    summary: "A new agent with the same settings and no runtime sessions",
    request: { params: namePathParams, body: jsonBody(duplicateBody) },
    responses: { 201: jsonResponse("{agent}"), ...errorResponses },
  }),
  delete: createRoute({
    method: "delete",
    path: "/api/agents/{name}",
    summary: "Delete an agent and its runtime sessions",
    request: { params: namePathParams },
    responses: { 200: jsonResponse("{deleted}"), ...errorResponses },
  }),
};

/**
 * Agents: their settings, runtime and cost (`GET /api/agents`), edits (`PATCH`: a new `cwd` clears the
 * agent's runtime sessions and answers with the notice), duplicates without sessions, deletion.
 */
export function agentRoutes(deps: RouteDeps): OpenAPIHono<GatewayEnv> {
  const { agents } = deps.engine;
  const app = documentedRoutes();

  app.openapi(agentOperations.list, async (c) =>
    c.json({ agents: await agents.list(), defaultAgent: deps.engine.routing.defaultAgent }),
  );

  app.openapi(agentOperations.get, async (c) =>
    c.json({ agent: await agents.get(c.req.valid("param").name) }),
  );

  app.patch(honoPath(agentOperations.patch), async (c) => {
    const patch = bodyOf(agentPatch, await readJsonObject(c, deps.bodyLimit));
    return c.json(await agents.update(pathParam(c, "name"), patch));
  });

  app.post(honoPath(agentOperations.duplicate), async (c) => {
    const { name } = bodyOf(duplicateBody, await readJsonObject(c, deps.bodyLimit));
    return c.json({ agent: await agents.duplicate(pathParam(c, "name"), name) }, 201);
  });

  app.openapi(agentOperations.delete, async (c) => {
    const { name } = c.req.valid("param");
    await agents.delete(name);
    return c.json({ deleted: name });
  });

  return app;
}
