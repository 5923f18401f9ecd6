import { type Handler, Hono } from "hono";
import { HTTPException } from "hono/http-exception";
import { requestId } from "hono/request-id";
import { withIncomingTrace } from "../tracing/spans.js";
import { requireToken } from "./auth.js";
import { DEFAULT_BODY_LIMIT } from "./body.js";
import type { GatewayDeps } from "./deps.js";
import { describeError, errorHeaders, HttpError } from "./errors.js";
import { allowedMethods } from "./methods.js";
import { createMetrics, type GatewayMetrics } from "./metrics/recorder.js";
import { chatRoutes } from "./routes/chat.js";
import { dashboardRoutes } from "./routes/dashboard.js";
import {
  type DocumentedPath,
  EARLY_DOCUMENTED,
  LATE_DOCUMENTED,
  METRICS_DOCUMENTED,
} from "./routes/documented-paths.js";
import { openAiRoutes } from "./routes/openai.js";
import { openApiRoutes } from "./routes/openapi-route.js";
import { loggedPath, sharePageRoutes } from "./routes/share-page.js";
import { storeBackupRoutes } from "./routes/store-backup.js";
import { turnRoutes } from "./routes/turns.js";
import type { GatewayEnv, GatewayOptions, RouteDeps } from "./types.js";
import { defaultWebDir } from "./web/dir.js";
import { serveDashboard } from "./web/static.js";

export interface GatewayApp {
  app: Hono<GatewayEnv>;
  metrics: GatewayMetrics;
}

/** The HTTP API as a Hono app: request ids and logs, the token check, the routes, one error shape. */
export function createGatewayApp(deps: GatewayDeps, options: GatewayOptions = {}): GatewayApp {
  const routeDeps: RouteDeps = {
    ...deps,
    bodyLimit: options.bodyLimit ?? DEFAULT_BODY_LIMIT,
    trustProxyHeader: options.trustProxyHeader?.toLowerCase(),
    shutdownSignal: options.shutdownSignal ?? new AbortController().signal,
  };
  const metrics = createMetrics(deps.engine, deps.storeFallback, deps.channelStates);
  const app = new Hono<GatewayEnv>();

  // A caller's X-Request-Id is kept when it is at most 128 word characters, `-` or `=`; else a UUID.
  app.use(requestId({ limitLength: 128 }));
  // A W3C traceparent on the request: the turns it starts are spans of the caller's trace.
  app.use((c, next) => withIncomingTrace(c.req.header("traceparent"), c.req.header("tracestate"), next));
  app.use(async (c, next) => {
    const start = performance.now();
    await next();
    // Only the method, path and outcome: never headers, so no token or credential reaches the log.
    deps.logger.info(
      {
        requestId: c.get("requestId"),
        method: c.req.method,
        path: loggedPath(c.req.path),
        status: c.res.status,
        ms: Math.round(performance.now() - start),
      },
      "request",
    );
  });
  // The channels' webhooks check their platform's signature themselves; they come before the dashboard's
  // files so that a GET (WhatsApp's hub.challenge) reaches its channel, never index.html.
  if (options.publicRoutes) app.route("/", options.publicRoutes(routeDeps));
  // Share links open without the token: each shows one conversation, nothing else (routes/share-page.ts).
  app.route("/", sharePageRoutes(routeDeps));
  // The dashboard's files need no token (they hold no data); everything they call does.
  const webDir = options.webDir === false ? undefined : (options.webDir ?? defaultWebDir());
  if (webDir !== undefined) app.use(serveDashboard(webDir));
  app.use(requireToken(deps.token));

  // The routes declared with zod schemas load (with zod and the OpenAPI generator) on their first request.
  let documented: Promise<Hono<GatewayEnv>> | undefined;
  const toDocumented: Handler<GatewayEnv> = async (c) => {
    documented ??= import("./routes/documented.js").then((m) => m.documentedApp(routeDeps, metrics));
    const res = await (await documented).fetch(c.req.raw, c.env);
    // With the headers this app's middleware set on the context (request id, cache-control).
    return c.newResponse(res.body, res);
  };
  const mountDocumented = (paths: readonly DocumentedPath[]) => {
    for (const { method, path } of paths) app.on(method, path, toDocumented);
  };

  mountDocumented(EARLY_DOCUMENTED);
  app.route("/", turnRoutes(routeDeps));
  app.route("/", chatRoutes(routeDeps));
  app.route("/", openAiRoutes(routeDeps));
  mountDocumented(METRICS_DOCUMENTED);
  app.route("/", openApiRoutes());
  app.route("/", dashboardRoutes(routeDeps));
  app.route("/", storeBackupRoutes(routeDeps));
  mountDocumented(LATE_DOCUMENTED);

  const methodsOf = allowedMethods(app);
  app.notFound((c) => {
    const allowed = methodsOf(c.req.path);
    if (allowed.length > 0 && !allowed.includes(c.req.method)) {
      c.header("allow", allowed.join(", "));
      const message = `${c.req.path} takes ${allowed.join(" or ")}, not ${c.req.method}`;
      return c.json({ error: { code: "METHOD_NOT_ALLOWED", message } }, 405);
    }
    return c.json(
      { error: { code: "NOT_FOUND", message: `no route for ${c.req.method} ${c.req.path}` } },
      404,
    );
  });
  app.onError((error, c) => {
    // Hono's middleware (bearer auth) answers with a response of its own, already in sessiond's shape.
    if (error instanceof HTTPException) return error.getResponse();
    const { status, body } = describeError(error);
    if (status >= 500 && !(error instanceof HttpError)) {
      deps.logger.error(
        {
          requestId: c.get("requestId"),
          code: body.error.code,
          err: error instanceof Error ? error.message : String(error),
        },
        "request failed",
      );
    }
    if (status === 401) c.header("www-authenticate", 'Bearer realm="sessiond"');
    // The rest of an oversized body is never read: the connection cannot be reused for another request.
    if (status === 413) c.header("connection", "close");
    return c.json(body, status, errorHeaders(error));
  });
  return { app, metrics };
}
