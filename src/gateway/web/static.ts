import { readFile, stat } from "node:fs/promises";
import { extname, join, normalize, sep } from "node:path";
import type { MiddlewareHandler } from "hono";

/** Paths the API owns: never answered with a dashboard file, so they keep their auth and 404s. */
const API_PREFIXES = ["/api/", "/v1/", "/ws", "/metrics", "/health", "/channels/"];

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".json": "application/json",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".txt": "text/plain; charset=utf-8",
  ".map": "application/json",
};

/** Same-origin only; inline styles are allowed for the charts' computed bar sizes. */
const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'";

const NOT_BUILT = `<!doctype html><meta charset="utf-8"><title>sessiond</title>
<p>The dashboard is not built. Run <code>npm run build</code> (or <code>npm start</code>, which builds it).</p>`;

function isApiPath(path: string): boolean {
  return API_PREFIXES.some((prefix) => path === prefix.replace(/\/$/, "") || path.startsWith(prefix));
}

/**
 * Serves the built dashboard from `dir` without the token (the files hold no data; every API call they make
 * needs it). A path that names no file and no extension gets index.html, so client routes can be reloaded.
 */
export function serveDashboard(dir: string): MiddlewareHandler {
  const root = normalize(dir + sep);
  return async (c, next) => {
    const method = c.req.method;
    const path = c.req.path;
    if ((method !== "GET" && method !== "HEAD") || isApiPath(path)) return next();
    let relative: string;
    try {
      relative = decodeURIComponent(path);
    } catch {
      return next();
    }
    const file = normalize(join(root, relative));
    // `..` segments cannot leave the dashboard's folder.
    if (!file.startsWith(root)) return next();
    const found = await fileOf(file);
    if (found) return send(c, found, extname(file), relative.startsWith("/assets/"));
    if (extname(relative) !== "") {
      return c.json({ error: { code: "NOT_FOUND", message: `no file ${relative.slice(0, 128)}` } }, 404);
    }
    const index = await fileOf(join(root, "index.html"));
    if (!index) return c.html(NOT_BUILT, 503);
    return send(c, index, ".html", false);
  };
}

async function fileOf(path: string): Promise<Buffer | undefined> {
  try {
    if (!(await stat(path)).isFile()) return undefined;
    return await readFile(path);
  } catch {
    return undefined;
  }
}

function send(
  c: Parameters<MiddlewareHandler>[0],
  body: Buffer,
  extension: string,
  hashed: boolean,
): Response {
  c.header("content-type", CONTENT_TYPES[extension] ?? "application/octet-stream");
  c.header("x-content-type-options", "nosniff");
  // Built assets carry a content hash in their names; index.html must be revalidated to pick them up.
  c.header("cache-control", hashed ? "public, max-age=31536000, immutable" : "no-cache");
  if (extension === ".html") {
    c.header("content-security-policy", CSP);
    c.header("referrer-policy", "no-referrer");
  }
  return c.body(new Uint8Array(body), 200);
}
