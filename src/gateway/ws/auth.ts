import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";

/** The token a client presented: `Authorization: Bearer`, `X-Sessiond-Token`, or `?token=` (browsers set no headers). */
export function presentedToken(request: IncomingMessage, url: URL): string | undefined {
  const authorization = request.headers.authorization;
  if (authorization !== undefined) {
    const match = /^Bearer\s+(.+)$/i.exec(authorization.trim());
    if (match?.[1] !== undefined) return match[1];
  }
  const header = request.headers["x-sessiond-token"];
  if (typeof header === "string" && header.length > 0) return header;
  return url.searchParams.get("token") ?? undefined;
}

/**
 * Compares in constant time. Both sides are hashed first so the buffers have equal length whatever was
 * sent, and the comparison leaks neither the token's content nor its length.
 */
export function tokenMatches(presented: string | undefined, expected: string): boolean {
  if (presented === undefined || expected.length === 0) return false;
  const a = createHash("sha256").update(presented).digest();
  const b = createHash("sha256").update(expected).digest();
  return timingSafeEqual(a, b);
}
