import type { IncomingMessage } from "node:http";
import {
  tokenMatches as digestsMatch,
  presentedToken as presentedHeaderToken,
  TOKEN_HEADERS,
} from "../auth.js";

/** The token a client presented: the HTTP headers the REST side accepts, or `?token=` (browsers set no headers). */
export function presentedToken(request: IncomingMessage, url: URL): string | undefined {
  const headers = new Headers();
  for (const name of ["authorization", ...TOKEN_HEADERS]) {
    const value = request.headers[name];
    if (typeof value === "string") headers.set(name, value);
  }
  return presentedHeaderToken(headers) ?? url.searchParams.get("token") ?? undefined;
}

/** Constant-time, as on the REST side; nothing matches an empty configured token. */
export function tokenMatches(presented: string | undefined, expected: string): boolean {
  return presented !== undefined && expected.length > 0 && digestsMatch(presented, expected);
}
