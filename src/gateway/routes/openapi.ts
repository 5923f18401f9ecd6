import { OpenAPIHono } from "@hono/zod-openapi";
import { eventDocs } from "../ws/event-docs.js";
import { methodDocs } from "../ws/handlers/index.js";
import { agentOperations } from "./agents.js";
import { costOperations } from "./cost.js";
import { dashboardOperations } from "./dashboard-operations.js";
import { healthOperations } from "./health.js";
import { inspectOperations } from "./inspect.js";
import { metricsOperations } from "./metrics.js";
import { openAiOperations } from "./openai-operations.js";
import { searchOperations } from "./search.js";
import { branchOperations } from "./session-branches.js";
import { sessionOperations } from "./sessions.js";
import { shareOperations } from "./shares.js";
import { subjectOperations } from "./subjects.js";
import { turnOperations } from "./turn-operations.js";
import { workSessionOperations } from "./work-sessions.js";

/** Every route of the gateway but the channel webhooks (each platform's own protocol), declared with zod schemas. */
export const DECLARED = [
  healthOperations,
  metricsOperations,
  sessionOperations,
  branchOperations,
  searchOperations,
  agentOperations,
  inspectOperations,
  workSessionOperations,
  turnOperations,
  openAiOperations,
  dashboardOperations,
  shareOperations,
  subjectOperations,
  costOperations,
];

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

/** The gateway's OpenAPI 3.1 document, generated from the declared routes' schemas. */
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
  generated = {
    ...document,
    paths: document.paths as OpenApiDocument["paths"],
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
        'request {type:"req", id, method, params, traceparent?, tracestate?}; response {type:"res", id, ok, result | error}; event {type:"event", event, data}',
      errors:
        "BAD_FRAME, INVALID_REQUEST, UNKNOWN_METHOD, INVALID_ARGUMENT (an unknown parameter too), and the REST codes",
      methods: methodDocs(),
      events: eventDocs(),
    },
  } as OpenApiDocument;
  return generated;
}
