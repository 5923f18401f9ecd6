import type { ServerOptions } from "node:http";

/** How long a client may take before the gateway closes its connection. */
export interface ConnectionLimits {
  /** From connecting (or the previous response) to the end of the request's headers; default 10 s. */
  headersTimeoutMs?: number;
  /** From connecting to the end of the request's body; default 30 s. An SSE reply's time does not count. */
  requestTimeoutMs?: number;
  /** How long a keep-alive connection may sit idle between requests; default 5 s. */
  keepAliveTimeoutMs?: number;
}

export const DEFAULT_HEADERS_TIMEOUT_MS = 10_000;
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
export const DEFAULT_KEEP_ALIVE_TIMEOUT_MS = 5_000;

/**
 * Node's http server options for the limits. Node checks the headers and request timeouts only every
 * `connectionsCheckingInterval` (default 30 s, so a connect-only or slowloris socket was held 80 s and
 * more); here the check runs at a quarter of the shorter timeout, at most once a second.
 */
export function serverOptions(limits: ConnectionLimits): ServerOptions {
  const headersTimeout = limits.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS;
  const requestTimeout = Math.max(headersTimeout, limits.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS);
  return {
    headersTimeout,
    requestTimeout,
    keepAliveTimeout: limits.keepAliveTimeoutMs ?? DEFAULT_KEEP_ALIVE_TIMEOUT_MS,
    connectionsCheckingInterval: Math.max(10, Math.min(1_000, Math.floor(headersTimeout / 4))),
  };
}
