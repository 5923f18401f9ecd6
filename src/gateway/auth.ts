import { createHash, timingSafeEqual } from "node:crypto";
import type { MiddlewareHandler } from "hono";
import { bearerAuth } from "hono/bearer-auth";
import { SessiondError } from "../model/errors.js";

/** Paths anyone may call: liveness only. */
const PUBLIC_PATHS = new Set(["/health", "/health/live"]);

/** Compares digests so neither the length nor the content of the token leaks through timing. */
export function tokenMatches(given: string, token: string | Buffer): boolean {
  const b = typeof token === "string" ? digestOf(token) : token;
  return timingSafeEqual(digestOf(given), b);
}

/** The digest `tokenMatches` compares; a caller that checks many requests computes the token's once. */
export function digestOf(token: string): Buffer {
  return createHash("sha256").update(token).digest();
}

/** Headers that carry the token as it is: sessiond's own, and GoClaw's so its users' scripts work unchanged. */
export const TOKEN_HEADERS = ["x-sessiond-token", "x-goclaw-token"] as const;

/** The token a request presents: `Authorization: Bearer <token>`, `X-Sessiond-Token` or `X-Goclaw-Token`. */
export function presentedToken(headers: Headers): string | undefined {
  const authorization = headers.get("authorization");
  if (authorization) {
    const match = /^Bearer\s+(.+)$/i.exec(authorization.trim());
    if (match?.[1]) return match[1].trim();
  }
  for (const name of TOKEN_HEADERS) {
    const value = headers.get(name)?.trim();
    if (value) return value;
  }
  return undefined;
}

/** RFC 6750's b64token: what `Authorization: Bearer` can carry, so what a gateway token may hold. */
const BEARER_TOKEN = /^[A-Za-z0-9._~+/-]+=*$/;

const CHALLENGE = 'Bearer realm="sessiond"';

function unauthorized(message: string): () => Response {
  return () =>
    new Response(JSON.stringify({ error: { code: "UNAUTHORIZED", message } }), {
      status: 401,
      headers: { "content-type": "application/json", "www-authenticate": CHALLENGE },
    });
}

/**
 * Hono's bearer-auth middleware, once per header that may carry the token: `Authorization: Bearer`, and
 * `X-Sessiond-Token` / `X-Goclaw-Token` holding it bare. Every failure is 401 UNAUTHORIZED.
 */
export function requireToken(token: string): MiddlewareHandler {
  if (!BEARER_TOKEN.test(token)) {
    throw new SessiondError(
      "CONFIG_INVALID",
      "the gateway token may hold only letters, digits and . _ ~ + / - (then = padding), as a Bearer token does",
    );
  }
  const digest = digestOf(token);
  const invalid = unauthorized("invalid access token");
  const options = {
    verifyToken: (given: string) => tokenMatches(given, digest),
    noAuthenticationHeader: {
      message: unauthorized(
        "missing access token (Authorization: Bearer, X-Sessiond-Token or X-Goclaw-Token)",
      ),
    },
    invalidAuthenticationHeader: { message: invalid },
    invalidToken: { message: invalid },
  };
  const checks = new Map<string, MiddlewareHandler>([
    ["authorization", bearerAuth(options)],
    ...TOKEN_HEADERS.map((name): [string, MiddlewareHandler] => [
      name,
      bearerAuth({ ...options, headerName: name, prefix: "" }),
    ]),
  ]);
  const byDefault = checks.get("authorization") as MiddlewareHandler;
  return async (c, next) => {
    if (PUBLIC_PATHS.has(c.req.path)) return next();
    const header = [...checks.keys()].find((name) => c.req.header(name)?.trim());
    const check = (header && checks.get(header)) || byDefault;
    return check(c, async () => {
      c.header("cache-control", "no-store");
      await next();
    });
  };
}
