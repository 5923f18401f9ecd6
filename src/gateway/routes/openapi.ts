import { OpenAPIHono } from "@hono/zod-openapi";
import { methodDocs } from "../ws/handlers/index.js";
import { agentOperations } from "./agents.js";
import { healthOperations } from "./health.js";
import { inspectOperations } from "./inspect.js";
import { metricsOperations } from "./metrics.js";
import { searchOperations } from "./search.js";
import { sessionOperations } from "./sessions.js";
import { workSessionOperations } from "./work-sessions.js";

/** The routes declared with zod schemas (`createRoute`): the document's part that is generated from them. */
export const DECLARED = [
  healthOperations,
  metricsOperations,
  sessionOperations,
  searchOperations,
  agentOperations,
  inspectOperations,
  workSessionOperations,
];

const error = { $ref: "#/components/schemas/Error" };
const errors = {
  "400": { description: "Bad input", content: { "application/json": { schema: error } } },
  "401": { description: "Missing or wrong token", content: { "application/json": { schema: error } } },
  "404": { description: "Unknown session or route", content: { "application/json": { schema: error } } },
};
const keyParam = {
  name: "key",
  in: "path",
  required: true,
  description: "The session key, percent-encoded (it is decoded exactly once)",
  schema: { type: "string" },
};
const ok = (description: string) => ({
  description,
  content: { "application/json": { schema: { type: "object" } } },
});
const messageBody = (required: string[], properties: Record<string, unknown>) => ({
  required: true,
  content: { "application/json": { schema: { type: "object", required, properties } } },
});
const turn = {
  "200": ok("The turn's reply (JSON), or SSE events delta/done/error with Accept: text/event-stream"),
  "202": ok(
    "With Prefer: respond-async or ?async=1: {id, key, session_id, state: queued} once the input is admitted; GET /api/turns/{id} gives the result",
  ),
  ...errors,
  "429": ok("Too many turns queued on the session"),
};

/**
 * Routes still validated by hand, written here: the turn routes (chat, webhook, app API, hooks, OpenAI
 * compatible, `/api/turns/{id}`), which are being reworked, and the dashboard's export and overview.
 */
const HAND_WRITTEN_PATHS = {
  "/api/sessions/{key}/export": {
    get: {
      summary: "A key's sessions as a document (json, jsonl, md)",
      parameters: [
        keyParam,
        ...["format", "all"].map((name) => ({ name, in: "query", schema: { type: "string" } })),
      ],
      responses: { "200": { description: "the export" }, ...errors },
    },
  },
  "/api/stats/overview": {
    get: {
      summary: "Activity per hour over a recent window, from bounded reads",
      parameters: [{ name: "hours", in: "query", schema: { type: "string" } }],
      responses: { "200": ok("{from, to, hours, totals, truncated}"), ...errors },
    },
  },
  "/api/turns/{id}": {
    get: {
      summary: "A turn's state (queued, running, done, failed, interrupted, cancelled) and reply",
      parameters: [{ name: "id", in: "path", required: true, schema: { type: "string" } }],
      responses: {
        "200": ok("{id, key, state, admittedAt, startedAt?, finishedAt?, reply?, replyId?, notice?, error?}"),
        ...errors,
        "410": ok("The finished turn's result was evicted (turns.results_max_bytes)"),
      },
    },
    delete: {
      summary: "Cancel a queued input before it runs",
      parameters: [{ name: "id", in: "path", required: true, schema: { type: "string" } }],
      responses: { "200": ok("{id, cancelled}"), ...errors },
    },
  },
  "/api/turns/{id}/abort": {
    post: {
      summary: "Stop a turn: cancel it while queued, abort it while running (its partial reply kept)",
      parameters: [{ name: "id", in: "path", required: true, schema: { type: "string" } }],
      responses: { "200": ok("{id, cancelled} or {id, aborted}"), ...errors },
    },
  },
  "/api/chat": {
    post: {
      summary: "Web chat turn",
      requestBody: messageBody(["message"], {
        message: { type: "string" },
        session_id: { type: "string", description: "admin-session or admin-…" },
        agent: { type: "string" },
      }),
      responses: turn,
    },
  },
  "/api/webhook": {
    post: {
      summary: "Webhook turn",
      requestBody: messageBody(["peer", "message"], {
        peer: { type: "string" },
        message: { type: "string" },
        channel: { type: "string" },
        subject_ref: { type: "string" },
      }),
      responses: turn,
    },
  },
  "/api/app/{user}": {
    post: {
      summary: "App API turn",
      requestBody: messageBody(["message"], { message: { type: "string" } }),
      responses: turn,
    },
  },
  "/api/app/{user}/{session}": {
    post: {
      summary: "App API turn on a named session",
      requestBody: messageBody(["message"], { message: { type: "string" } }),
      responses: turn,
    },
  },
  "/api/hooks/{agent}/{type}": {
    post: {
      summary: "Chat webhook about an entity (taken from the payload)",
      requestBody: messageBody([], {}),
      responses: turn,
    },
  },
  "/v1/models": { get: { summary: "Agents as OpenAI models", responses: { "200": ok("model list") } } },
  "/v1/chat/completions": {
    post: {
      summary:
        "OpenAI-compatible chat; session openai-compat:<client IP>[:<user or X-Sessiond-Session>]; the last user message is the input, and earlier messages that do not continue the stored ones start a new generation (reset cause client)",
      requestBody: messageBody(["messages"], {
        model: { type: "string" },
        messages: { type: "array" },
        stream: { type: "boolean" },
        user: { type: "string" },
      }),
      responses: turn,
    },
  },
};

/** One operation of the document, as far as callers read it. */
export interface OpenApiOperation {
  summary?: string;
  parameters?: ReadonlyArray<{
    name: string;
    in: string;
    required?: boolean;
    schema?: Record<string, unknown>;
  }>;
  requestBody?: {
    content: Record<string, { schema: { properties?: Record<string, unknown>; required?: string[] } }>;
  };
  responses: Record<string, unknown>;
}

export interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string };
  paths: Record<string, Record<string, OpenApiOperation>>;
  [extension: string]: unknown;
}

let generated: OpenApiDocument | undefined;

/** The gateway's OpenAPI 3.1 document: generated from the declared routes' schemas, then the hand-written rest. */
export function openApiDocument(): OpenApiDocument {
  if (generated) return generated;
  const registry = new OpenAPIHono();
  for (const operations of DECLARED) {
    for (const route of Object.values(operations)) registry.openAPIRegistry.registerPath(route);
  }
  const document = registry.getOpenAPI31Document({
    openapi: "3.1.0",
    info: { title: "sessiond gateway", version: "1" },
    security: [{ bearer: [] }, { header: [] }],
  });
  const paths = document.paths as Record<string, Record<string, OpenApiOperation>>;
  for (const [path, operations] of Object.entries(HAND_WRITTEN_PATHS)) {
    paths[path] = { ...paths[path], ...(operations as Record<string, OpenApiOperation>) };
  }
  generated = {
    ...document,
    paths,
    components: {
      ...document.components,
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer" },
        header: { type: "apiKey", in: "header", name: "X-Sessiond-Token" },
        goclaw: { type: "apiKey", in: "header", name: "X-Goclaw-Token" },
      },
    },
    // OpenAPI has no WebSocket methods: an extension lists them with their parameters.
    "x-websocket": {
      path: "/ws",
      frames:
        'request {type:"req", id, method, params}; response {type:"res", id, ok, result | error}; event {type:"event", event, data}',
      errors:
        "BAD_FRAME, INVALID_REQUEST, UNKNOWN_METHOD, INVALID_ARGUMENT (an unknown parameter too), and the REST codes",
      methods: methodDocs(),
    },
  } as OpenApiDocument;
  return generated;
}
