import { type Context, Hono } from "hono";
import { isShareId, SHARE_ID_LENGTH } from "../../shares/share.js";
import { HttpError } from "../errors.js";
import { NOT_FOUND_HTML, SHARE_PAGE_CSP, shareHtml } from "../share-html.js";
import type { GatewayEnv, RouteDeps } from "../types.js";

/** Share pages read and rendered at once per process: each holds up to 1 MiB of text while it renders. */
export const MAX_SHARE_PAGES_IN_FLIGHT = 8;

const JSON_SUFFIX = ".json";

/**
 * `GET /share/{id}`: the shared conversation without the token, as HTML; `/share/{id}.json` as JSON (one
 * rule: the suffix, so a link says what it gives). Mounted before the token check. Nothing else answers
 * under /share/, and a revoked, unknown or malformed id gets the same 404, read from the store each time
 * (no cache: a revocation on any gateway of the store holds at once). Never cached by a browser or proxy.
 */
export function sharePageRoutes(deps: RouteDeps): Hono<GatewayEnv> {
  const { engine } = deps;
  const app = new Hono<GatewayEnv>();
  let inFlight = 0;

  const notFound = (c: Context, json: boolean) => {
    headers(c);
    return json
      ? c.json({ error: { code: "NOT_FOUND", message: "no such share link" } }, 404)
      : c.html(NOT_FOUND_HTML, 404);
  };

  app.get("/share/:id", async (c) => {
    const raw = c.req.param("id");
    const json = raw.endsWith(JSON_SUFFIX);
    const id = json ? raw.slice(0, -JSON_SUFFIX.length) : raw;
    // A malformed id (path-like, huge, wrong alphabet) is refused before any read.
    if (id.length !== SHARE_ID_LENGTH || !isShareId(id)) return notFound(c, json);
    if (inFlight >= MAX_SHARE_PAGES_IN_FLIGHT) {
      throw new HttpError(429, "SESSION_BUSY", "too many share pages are being read; try again shortly", 1);
    }
    inFlight++;
    try {
      const view = await engine.shares.view(id);
      if (!view) return notFound(c, json);
      headers(c);
      return json ? c.json(view) : c.html(shareHtml(view));
    } finally {
      inFlight--;
    }
  });
  app.all("/share/*", (c) => notFound(c, false));
  return app;
}

/** A request's path as logged: a share id opens a conversation, so it never reaches the log. */
export function loggedPath(path: string): string {
  if (path.startsWith("/share/")) return "/share/…";
  return path.startsWith("/api/shares/") ? "/api/shares/…" : path;
}

function headers(c: Context) {
  c.header("cache-control", "no-store");
  c.header("x-content-type-options", "nosniff");
  c.header("referrer-policy", "no-referrer");
  c.header("x-robots-tag", "noindex");
  c.header("content-security-policy", SHARE_PAGE_CSP);
}
