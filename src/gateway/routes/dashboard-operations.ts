import { EXPORT_FORMATS } from "../../export/index.js";
import {
  createRoute,
  errorResponses,
  intQueryParam,
  jsonResponse,
  keyPathParams,
  textQueryParam,
  z,
} from "./openapi-kit.js";

/**
 * What the dashboard reads besides the session and agent routes (routes/dashboard.ts), and this document
 * itself (routes/openapi-route.ts), as the document shows them; the handlers check their queries with these.
 */
export const overviewQuery = z.object({
  hours: intQueryParam("hours", 1, 168, "the window, in hours back from now (default 24)"),
});

export const exportQuery = z.object({
  format: z
    .enum(EXPORT_FORMATS, { error: `format must be one of ${EXPORT_FORMATS.join(", ")}` })
    .optional()
    .openapi({ description: "default json" }),
  all: textQueryParam("true: every generation, archived ones too"),
});

export const dashboardOperations = {
  overview: createRoute({
    method: "get",
    path: "/api/stats/overview",
    summary: "Activity per hour over a recent window, from bounded reads",
    request: { query: overviewQuery },
    responses: { 200: jsonResponse("{from, to, hours, totals, truncated}"), ...errorResponses },
  }),
  export: createRoute({
    method: "get",
    path: "/api/sessions/{key}/export",
    summary: "A key's sessions as a document (json, jsonl, md)",
    request: { params: keyPathParams, query: exportQuery },
    responses: {
      200: {
        description: "the export",
        content: {
          "application/json": { schema: z.any().openapi({ type: "object" }) },
          "application/x-ndjson": { schema: z.string() },
          "text/markdown": { schema: z.string() },
        },
      },
      ...errorResponses,
    },
  }),
  backup: createRoute({
    method: "get",
    path: "/api/store/backup",
    summary:
      "A consistent copy of the JSONL store while it is written (gzipped tar); sessiond backup asks for it",
    responses: {
      200: {
        description: "the store's files at one instant, and .sessiond/backup.json last",
        content: { "application/gzip": { schema: z.string().openapi({ format: "binary" }) } },
      },
      ...errorResponses,
    },
  }),
  document: createRoute({
    method: "get",
    path: "/api/openapi.json",
    summary: "This document",
    responses: { 200: jsonResponse("OpenAPI 3.1") },
  }),
};
