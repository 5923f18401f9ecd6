import type { Hono } from "hono";
import type { GatewayDeps } from "./deps.js";

/** Per-request values the middleware sets. */
export interface GatewayEnv {
  Variables: { requestId: string };
}

export interface GatewayOptions {
  /** Largest request body in bytes; default 1 MiB. */
  bodyLimit?: number;
  /**
   * Take the client IP (for `openai-compat:<ip>` keys) from this header, e.g. `x-forwarded-for`. Only set
   * it behind a proxy that overwrites the header: otherwise any client can pick another client's session.
   */
  trustProxyHeader?: string;
  /** Aborted when shutdown's grace period ends: running turns are cancelled then. */
  shutdownSignal?: AbortSignal;
  /** The built dashboard served at `/`; default `dist/web` of the package; `false` serves none. */
  webDir?: string | false;
  /** Routes that check their callers themselves (channel webhooks), mounted before the token check. */
  publicRoutes?: (deps: RouteDeps) => Hono;
}

/** What every route module is built from. */
export interface RouteDeps extends GatewayDeps {
  bodyLimit: number;
  trustProxyHeader: string | undefined;
  shutdownSignal: AbortSignal;
}
