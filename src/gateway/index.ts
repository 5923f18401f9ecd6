import type { Server } from "node:http";
import type { Hono } from "hono";
import type { Engine } from "../engine.js";
import { createGatewayApp } from "./app.js";
import type { GatewayDeps, GatewayLogger } from "./deps.js";
import { createGatewayLogger } from "./logger.js";
import type { GatewayMetrics } from "./metrics/recorder.js";
import type { StoreFallback } from "./store-fallback.js";
import type { GatewayEnv, GatewayOptions } from "./types.js";
import { type AttachedWebSocket, attachWebSocket, type WebSocketOptions } from "./ws/index.js";

export { createGatewayApp, type GatewayApp } from "./app.js";
export type { GatewayDeps, GatewayLogger } from "./deps.js";
export {
  DEFAULT_GRACE_MS,
  DEFAULT_HOST,
  DEFAULT_PORT,
  type RunningGateway,
  type StartGatewayOptions,
  startGateway,
} from "./server.js";
export type { GatewayEnv, GatewayOptions } from "./types.js";
export type { AttachedWebSocket, WebSocketOptions } from "./ws/index.js";

export interface CreateGatewayOptions extends GatewayOptions {
  /** The access token every route but `/health` and the channel webhooks needs. */
  token: string;
  /** Default: pino JSON lines on stdout. */
  logger?: GatewayLogger;
  /** The WebSocket protocol's path (default `/ws`; the full path when the app is mounted under a prefix). */
  websocket?: WebSocketOptions;
  /** Set when the configured store could not be opened and the engine runs on the memory store. */
  storeFallback?: StoreFallback;
  /** The channels' states, shown in `/health` and `/metrics`. */
  channelStates?: GatewayDeps["channelStates"];
}

/** The gateway as parts to embed: transport only, every turn runs in `engine`. */
export interface Gateway {
  /**
   * The HTTP API. Mount it at the root (`parent.route("/", gateway.app)`, after the parent's own routes) or
   * under a prefix with `parent.mount("/prefix", gateway.fetch)`, which strips the prefix before it.
   */
  app: Hono<GatewayEnv>;
  fetch(request: Request): Response | Promise<Response>;
  metrics: GatewayMetrics;
  deps: GatewayDeps;
  /** Serves the WebSocket protocol on `server`'s upgrades to the WebSocket path. */
  attachWebSocket(server: Server): AttachedWebSocket;
  /** Stops the metrics' timers; the engine stays open (close it yourself). */
  close(): void;
}

/** The gateway of `engine` without a server of its own, to mount in another Hono or Node server. */
export function createGateway(engine: Engine, options: CreateGatewayOptions): Gateway {
  const { token, logger, websocket, storeFallback, channelStates, ...appOptions } = options;
  const deps: GatewayDeps = {
    engine,
    token,
    logger: logger ?? createGatewayLogger(),
    ...(storeFallback ? { storeFallback } : {}),
    ...(channelStates ? { channelStates } : {}),
  };
  const { app, metrics } = createGatewayApp(deps, appOptions);
  return {
    app,
    fetch: (request) => app.fetch(request),
    metrics,
    deps,
    attachWebSocket: (server) => attachWebSocket(server, deps, websocket),
    close: () => metrics.stop(),
  };
}
