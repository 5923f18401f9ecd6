import { Hono } from "hono";
import { SEARCH_PARAMS } from "../../search/query-params.js";
import type { GatewayEnv } from "../types.js";
import { methodDocs } from "../ws/handlers/index.js";

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
const nameParam = { name: "name", in: "path", required: true, schema: { type: "string" } };
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

export const OPENAPI_DOCUMENT = {
  openapi: "3.1.0",
  info: { title: "sessiond gateway", version: "1" },
  components: {
    securitySchemes: {
      bearer: { type: "http", scheme: "bearer" },
      header: { type: "apiKey", in: "header", name: "X-Sessiond-Token" },
      goclaw: { type: "apiKey", in: "header", name: "X-Goclaw-Token" },
    },
    schemas: {
      Error: {
        type: "object",
        required: ["error"],
        properties: {
          error: {
            type: "object",
            required: ["code", "message"],
            properties: { code: { type: "string" }, message: { type: "string" } },
          },
        },
      },
    },
  },
  security: [{ bearer: [] }, { header: [] }],
  paths: {
    "/health": { get: { security: [], summary: "Liveness", responses: { "200": ok("ok") } } },
    "/metrics": {
      get: { summary: "Prometheus metrics", responses: { "200": { description: "text exposition format" } } },
    },
    "/api/sessions": {
      get: {
        summary: "List sessions",
        parameters: ["agent", "channel", "active", "sort", "limit", "cursor", "archived", "q"].map(
          (name) => ({
            name,
            in: "query",
            schema: { type: "string" },
          }),
        ),
        responses: { "200": ok("{sessions, nextCursor?}"), ...errors },
      },
    },
    "/api/search": {
      get: {
        summary: "Search what was said (user and assistant messages), best first",
        parameters: ["q", ...SEARCH_PARAMS].map((name) => ({
          name,
          in: "query",
          required: name === "q",
          schema: { type: "string" },
        })),
        responses: {
          "200": ok(
            "{hits: [{key, sessionId, generation, archived, seq, role, ts, agent, channel, snippet}], nextCursor?, indexing}",
          ),
          ...errors,
        },
      },
    },
    "/api/sessions/{key}": {
      get: {
        summary: "One session",
        parameters: [keyParam],
        responses: { "200": ok("{session, queued, runtimeSessions, cost, needsAttention}"), ...errors },
      },
      delete: {
        summary: "Delete every generation of a key",
        parameters: [keyParam],
        responses: { "200": ok("{deleted}"), ...errors },
      },
    },
    "/api/sessions/{key}/history": {
      get: {
        summary: "History of a session",
        parameters: [
          keyParam,
          ...["limit", "before", "all"].map((name) => ({ name, in: "query", schema: { type: "string" } })),
        ],
        responses: { "200": ok("{key, entries}"), ...errors },
      },
    },
    "/api/sessions/{key}/compact": {
      post: {
        summary: "Compact now",
        parameters: [keyParam],
        responses: { "200": ok("{summary, entry}"), ...errors, "409": ok("Nothing to compact") },
      },
    },
    "/api/sessions/{key}/reset": {
      post: {
        summary: "Archive and start anew",
        parameters: [keyParam],
        responses: { "200": ok("{archived, current}"), ...errors },
      },
    },
    "/api/agents": {
      get: {
        summary: "Agents with their runtime, settings and cost totals, and the default agent",
        responses: { "200": ok("{agents, defaultAgent}") },
      },
    },
    "/api/agents/{name}": {
      get: { summary: "One agent", parameters: [nameParam], responses: { "200": ok("{agent}"), ...errors } },
      patch: {
        summary: "Edit settings; a new cwd clears the agent's runtime sessions",
        parameters: [nameParam],
        requestBody: messageBody([], {
          runtime: { type: ["string", "null"] },
          cwd: { type: ["string", "null"] },
          model: { type: ["string", "null"] },
          instructions: { type: ["string", "null"] },
        }),
        responses: { "200": ok("{agent, cleared, notice?}"), ...errors },
      },
      delete: {
        summary: "Delete an agent and its runtime sessions",
        parameters: [nameParam],
        responses: { "200": ok("{deleted}"), ...errors },
      },
    },
    "/api/agents/{name}/duplicate": {
      post: {
        summary: "A new agent with the same settings and no runtime sessions",
        parameters: [nameParam],
        requestBody: messageBody(["name"], { name: { type: "string" } }),
        responses: { "201": ok("{agent}"), ...errors },
      },
    },
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
    "/api/inspect": {
      get: {
        summary: "Context size, tokens, last compaction, queued turns per session; the queued inputs",
        responses: {
          "200": ok(
            "{sessions, queuedTotal, queued: [{id, key, agent, preview, mode, admittedAt}], running: [{id, key, startedAt, lastEventAt, events, stuck}]}",
          ),
        },
      },
    },
    "/api/turns/{id}": {
      get: {
        summary: "A turn's state (queued, running, done, failed, interrupted, cancelled) and reply",
        parameters: [{ name: "id", in: "path", required: true, schema: { type: "string" } }],
        responses: {
          "200": ok(
            "{id, key, state, admittedAt, startedAt?, finishedAt?, reply?, replyId?, notice?, error?}",
          ),
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
          "OpenAI-compatible chat; session openai-compat:<client IP>, its stored history is authoritative and only the last user message is used",
        requestBody: messageBody(["messages"], {
          model: { type: "string" },
          messages: { type: "array" },
          stream: { type: "boolean" },
        }),
        responses: turn,
      },
    },
  },
} as const;

export function openApiRoutes(): Hono<GatewayEnv> {
  const app = new Hono<GatewayEnv>();
  const document = {
    ...OPENAPI_DOCUMENT,
    // OpenAPI has no WebSocket methods: an extension lists them with their parameters.
    "x-websocket": {
      path: "/ws",
      frames:
        'request {type:"req", id, method, params}; response {type:"res", id, ok, result | error}; event {type:"event", event, data}',
      errors:
        "BAD_FRAME, INVALID_REQUEST, UNKNOWN_METHOD, INVALID_ARGUMENT (an unknown parameter too), and the REST codes",
      methods: methodDocs(),
    },
  };
  app.get("/api/openapi.json", (c) => c.json(document));
  return app;
}
