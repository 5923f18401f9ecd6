/**
 * The routes of the modules declared with zod schemas (routes/documented.ts), by module in the order the app
 * mounts them: the app answers these paths at start-up without loading zod and the OpenAPI generator, which
 * load on the first request to one of them. test/gateway/http/documented-paths.test.ts keeps the list equal
 * to the routes the modules really declare.
 */
export interface DocumentedPath {
  method: "GET" | "POST" | "PATCH" | "DELETE";
  /** Hono's form: `:key`. */
  path: string;
}

export const EARLY_DOCUMENTED: readonly DocumentedPath[] = [
  { method: "GET", path: "/health" },
  { method: "GET", path: "/health/live" },
  { method: "GET", path: "/api/sessions" },
  { method: "GET", path: "/api/sessions/:key" },
  { method: "GET", path: "/api/sessions/:key/history" },
  { method: "POST", path: "/api/sessions/:key/compact" },
  { method: "POST", path: "/api/sessions/:key/reset" },
  { method: "DELETE", path: "/api/sessions/:key" },
  { method: "POST", path: "/api/sessions/:key/fork" },
  { method: "POST", path: "/api/sessions/:key/rewind" },
  { method: "GET", path: "/api/sessions/:key/branches" },
  { method: "GET", path: "/api/search" },
  { method: "GET", path: "/api/agents" },
  { method: "GET", path: "/api/agents/:name" },
  { method: "PATCH", path: "/api/agents/:name" },
  { method: "POST", path: "/api/agents/:name/duplicate" },
  { method: "DELETE", path: "/api/agents/:name" },
  { method: "GET", path: "/api/inspect" },
  { method: "DELETE", path: "/api/turns/:id" },
];

/** Mounted after the turn, chat and OpenAI-compatible routes, as before. */
export const METRICS_DOCUMENTED: readonly DocumentedPath[] = [{ method: "GET", path: "/metrics" }];

/** Mounted last. */
export const LATE_DOCUMENTED: readonly DocumentedPath[] = [
  { method: "POST", path: "/api/sessions/:key/work-session" },
  { method: "DELETE", path: "/api/sessions/:key/work-session" },
  { method: "POST", path: "/api/sessions/:key/share" },
  { method: "GET", path: "/api/sessions/:key/shares" },
  { method: "DELETE", path: "/api/shares/:id" },
  { method: "DELETE", path: "/api/subjects/:id" },
  { method: "GET", path: "/api/cost" },
];
