import type { OpenAPIHono } from "@hono/zod-openapi";
import { validateKey } from "../../keys/index.js";
import { keyFromPath, readJsonObject } from "../body.js";
import { branchesAnswer, forkAnswer, rewindAnswer } from "../branch-answers.js";
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
  z,
} from "./openapi-kit.js";

const PREFIX = "/api/sessions/";

/** A seq: an integer from `min` up. */
function seq(field: string, min: number) {
  const message = `${field} must be an integer of at least ${min}`;
  return z
    .number({
      error: (issue) =>
        issue.input === undefined || issue.input === null ? `${field} is required` : message,
    })
    .int({ error: message })
    .min(min, { error: message })
    .max(Number.MAX_SAFE_INTEGER, { error: message });
}

/** An optional seq: absent or null is undefined. */
function optionalSeq(field: string, min: number, description: string) {
  return seq(field, min)
    .nullish()
    .transform((value) => value ?? undefined)
    .openapi({ description });
}

/** A strict body: a field it does not take is a 400 that names it and the ones it takes. */
function strictBody<T extends z.ZodRawShape>(operation: string, shape: T) {
  const takes = Object.keys(shape).join(", ");
  return z.strictObject(shape, {
    error: (issue) =>
      issue.code === "unrecognized_keys"
        ? `unknown field ${JSON.stringify(issue.keys[0])} (${operation} takes ${takes})`
        : undefined,
  });
}

export const forkBody = strictBody("fork", {
  at_seq: optionalSeq("at_seq", 1, "fork after this entry; default: the newest completed one"),
  to_key: z
    .string({ error: "to_key must be a non-empty string" })
    .min(1, { error: "to_key must be a non-empty string" })
    .nullish()
    .transform((value) => value ?? undefined)
    .openapi({
      description:
        "the new session's key (one with no session yet); default: a web chat key: <key>/fork-<id> for an admin-… key, else admin-fork-<id>",
    }),
});

export const rewindBody = strictBody("rewind", {
  to_seq: seq("to_seq", 1).openapi({
    description: "the first entry left out: the conversation continues before it",
  }),
  expect_head: optionalSeq(
    "expect_head",
    0,
    "compare-and-swap: the newest seq the rewind was computed on; moved on → 409 SESSION_CHANGED",
  ),
});

/** Fork, rewind and branches as the OpenAPI document shows them; their schemas check each request. */
export const branchOperations = {
  fork: createRoute({
    method: "post",
    path: "/api/sessions/{key}/fork",
    summary:
      "Fork at an entry: a new key whose history is this one's up to at_seq (nothing copied; this one unchanged)",
    request: { params: keyPathParams, body: { ...jsonBody(forkBody), required: false } },
    responses: {
      201: jsonResponse(
        "{key, session, forked_from: {key, session_id, seq}, runtime_sessions: {followed, cleared}}",
      ),
      ...errorResponses,
      409: jsonResponse("to_key already has a session (KEY_TAKEN)"),
    },
  }),
  rewind: createRoute({
    method: "post",
    path: "/api/sessions/{key}/rewind",
    summary:
      "Continue the conversation from before to_seq; what came after stays readable as a branch (archived)",
    request: { params: keyPathParams, body: jsonBody(rewindBody) },
    responses: {
      200: jsonResponse(
        "{session, archived, forked_from: {key, session_id, seq}, runtime_sessions: {followed, cleared}}",
      ),
      ...errorResponses,
      409: jsonResponse("The head moved past expect_head (SESSION_CHANGED)"),
    },
  }),
  branches: createRoute({
    method: "get",
    path: "/api/sessions/{key}/branches",
    summary:
      "The key's conversation tree: current, rewound and archived sessions, and the forks taken from them",
    request: { params: keyPathParams },
    responses: {
      200: jsonResponse("{key, branches: [{kind: current|rewound|archived|fork, key, session}]}"),
      ...errorResponses,
    },
  }),
};

/**
 * `POST …/fork` `{at_seq?, to_key?}` → 201, `POST …/rewind` `{to_seq, expect_head?}`, `GET …/branches`:
 * the engine's fork, rewind and branches over HTTP.
 */
export function branchRoutes(deps: RouteDeps): OpenAPIHono<GatewayEnv> {
  const { engine } = deps;
  const app = documentedRoutes();
  const existing = (key: string) => existingKey(engine, key);

  app.post(honoPath(branchOperations.fork), async (c) => {
    const key = keyFromPath(c, PREFIX);
    const body = bodyOf(forkBody, await readJsonObject(c, deps.bodyLimit, { optional: true }));
    if (body.to_key !== undefined) validateKey(body.to_key);
    await existing(key);
    const result = await engine.fork(key, {
      ...(body.at_seq !== undefined ? { atSeq: body.at_seq } : {}),
      ...(body.to_key !== undefined ? { toKey: body.to_key } : {}),
    });
    return c.json(forkAnswer(result), 201);
  });

  app.post(honoPath(branchOperations.rewind), async (c) => {
    const key = keyFromPath(c, PREFIX);
    const body = bodyOf(rewindBody, await readJsonObject(c, deps.bodyLimit));
    await existing(key);
    const result = await engine.rewind(key, {
      toSeq: body.to_seq,
      ...(body.expect_head !== undefined ? { expectHead: body.expect_head } : {}),
    });
    return c.json(rewindAnswer(result));
  });

  app.openapi(branchOperations.branches, async (c) => {
    const key = await existing(keyFromPath(c, PREFIX));
    return c.json(branchesAnswer(key, await engine.branches(key)));
  });

  return app;
}
