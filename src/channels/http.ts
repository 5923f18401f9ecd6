import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { Context } from "hono";
import { readBodyText } from "../gateway/body.js";
import { HttpError } from "../gateway/errors.js";

/** A key of this process alone: what is compared is two digests of equal length, never the secrets. */
const COMPARE_KEY = randomBytes(32);

/**
 * Compares two secrets in constant time whatever their lengths: the HMACs of both sides are compared, so
 * neither where they differ nor the expected secret's length shows in the time taken. An empty secret never
 * matches.
 */
export function sameSecret(given: string | undefined, expected: string): boolean {
  if (given === undefined || expected === "") return false;
  const a = createHmac("sha256", COMPARE_KEY).update(given).digest();
  const b = createHmac("sha256", COMPARE_KEY).update(expected).digest();
  return timingSafeEqual(a, b);
}

export function unauthorized(message: string): HttpError {
  return new HttpError(401, "UNAUTHORIZED", message);
}

/** The body's bytes as text (bounded), for checking a signature before anything is parsed. */
export function rawBody(c: Context, limit: number): Promise<string> {
  return readBodyText(c, limit);
}

/** The verified body as a JSON object; 400 INVALID_JSON otherwise. */
export function parseObject(text: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new HttpError(400, "INVALID_JSON", `the body is not valid JSON: ${(error as Error).message}`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new HttpError(400, "INVALID_JSON", "the body must be a JSON object");
  }
  return parsed as Record<string, unknown>;
}

/** Splits a reply into pieces of at most `max` characters (platforms cap a message's length). */
export function chunks(text: string, max: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += max) out.push(text.slice(i, i + max));
  return out.length > 0 ? out : [""];
}
