import type { Context } from "hono";
import { validateKey } from "../keys/index.js";
import { badRequest, HttpError } from "./errors.js";

export const DEFAULT_BODY_LIMIT = 1024 * 1024;
/**
 * How deep objects and arrays may nest in a request body. Far past any real payload, and far below what
 * makes recursive code (JSON.stringify of a hook payload, redaction) overflow the stack.
 */
export const MAX_JSON_DEPTH = 64;

/**
 * The request body as a JSON object. Over `limit` bytes is 413, whether Content-Length says so up front
 * or the stream runs past it; anything but a JSON object, or one nested deeper than `MAX_JSON_DEPTH`, is
 * 400 INVALID_JSON. `optional`: an empty body is `{}` (a route whose every field has a default).
 */
export async function readJsonObject(
  c: Context,
  limit: number,
  { optional = false }: { optional?: boolean } = {},
): Promise<Record<string, unknown>> {
  const text = await readBodyText(c, limit);
  if (optional && text.trim() === "") return {};
  if (text.trim() === "")
    throw new HttpError(400, "INVALID_JSON", "the request body is empty; expected a JSON object");
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new HttpError(
      400,
      "INVALID_JSON",
      `the request body is not valid JSON: ${(error as Error).message}`,
    );
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new HttpError(400, "INVALID_JSON", "the request body must be a JSON object");
  }
  if (nestedDeeperThan(parsed, MAX_JSON_DEPTH)) {
    throw new HttpError(
      400,
      "INVALID_JSON",
      `the request body nests objects and arrays more than ${MAX_JSON_DEPTH} deep`,
    );
  }
  return parsed as Record<string, unknown>;
}

/** Whether objects and arrays in `value` nest more than `max` deep; iterative, so any depth is safe to check. */
function nestedDeeperThan(value: object, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  for (let item = stack.pop(); item; item = stack.pop()) {
    const [node, depth] = item;
    if (depth > max) return true;
    for (const child of Object.values(node as object)) {
      if (typeof child === "object" && child !== null) stack.push([child, depth + 1]);
    }
  }
  return false;
}

/** The request body as text, at most `limit` bytes (413 past it); channel webhooks sign these bytes. */
export async function readBodyText(c: Context, limit: number): Promise<string> {
  const declared = Number(c.req.header("content-length") ?? "NaN");
  if (Number.isFinite(declared) && declared > limit) throw tooLarge(limit);
  // With a Content-Length the HTTP parser stops at that many bytes, so the adapter's direct read (no web
  // stream, no Request object) is bounded; a chunked body is counted as it streams in.
  return Number.isFinite(declared) ? await c.req.text() : await readCounted(c, limit);
}

async function readCounted(c: Context, limit: number): Promise<string> {
  const body = c.req.raw.body;
  if (!body) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      throw tooLarge(limit);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function tooLarge(limit: number): HttpError {
  return new HttpError(413, "PAYLOAD_TOO_LARGE", `the request body is larger than ${limit} bytes`);
}

/**
 * The path segment after `prefix`, percent-decoded exactly once and validated as a key. Read from the
 * raw URL so no router decoding (or a second decode) changes it: `..%2F` is the key `../`, never a path.
 */
export function keyFromPath(c: Context, prefix: string): string {
  const url = c.req.url;
  const pathStart = url.indexOf("/", url.indexOf("://") + 3);
  let end = url.length;
  for (const stop of ["?", "#"]) {
    const i = url.indexOf(stop, pathStart);
    if (i !== -1 && i < end) end = i;
  }
  const path = url.slice(pathStart, end);
  if (!path.startsWith(prefix)) throw badRequest("no session key in the path");
  const raw = path.slice(prefix.length).split("/")[0] ?? "";
  let key: string;
  try {
    key = decodeURIComponent(raw);
  } catch {
    throw new HttpError(400, "INVALID_KEY", "the session key in the path is not valid percent-encoding");
  }
  return validateKey(key);
}

/** What is wrong with `value` as an integer parameter from `min` to `max`; undefined when nothing is. */
export function intParamError(name: string, value: string, min: number, max: number): string | undefined {
  if (!/^\d+$/.test(value)) return `${name} must be an integer`;
  const n = Number(value);
  if (n < min || n > max) return `${name} must be between ${min} and ${max}`;
  return undefined;
}
