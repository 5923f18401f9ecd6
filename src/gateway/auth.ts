import { createHash, timingSafeEqual } from "node:crypto";
import type { MiddlewareHandler } from "hono";
import { HttpError } from "./errors.js";

/** Paths anyone may call: liveness only. */
const PUBLIC_PATHS = new Set(["/health"]);

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

export function requireToken(token: string): MiddlewareHandler {
  const digest = digestOf(token);
  return async (c, next) => {
    if (PUBLIC_PATHS.has(c.req.path)) return next();
    const given = presentedToken(c.req.raw.headers);
    if (given === undefined) {
      throw new HttpError(
        401,
        "UNAUTHORIZED",
        "missing access token (Authorization: Bearer, X-Sessiond-Token or X-Goclaw-Token)",
      );
    }
    if (!tokenMatches(given, digest)) throw new HttpError(401, "UNAUTHORIZED", "invalid access token");
    c.header("cache-control", "no-store");
    return next();
  };
}
