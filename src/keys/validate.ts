import { SessiondError } from "../model/errors.js";

export const MAX_KEY_BYTES = 512;
/** The longest name a caller may give one part of a key (a session name under its client's key). */
export const MAX_KEY_PART_BYTES = 128;

function invalidKey(reason: string, key: string): never {
  const preview = key.length > 64 ? `${key.slice(0, 64)}…` : key;
  throw new SessiondError("INVALID_KEY", `Invalid session key ${JSON.stringify(preview)}: ${reason}`, {
    details: { reason },
  });
}

function hex(code: number): string {
  return `U+${code.toString(16).toUpperCase().padStart(4, "0")}`;
}

/**
 * Returns the key when it is usable as a session key, else throws INVALID_KEY. Lone surrogates are
 * rejected too: UTF-8 encoding turns every one of them into U+FFFD, so two different keys would be
 * stored (and hashed into file names) as the same bytes.
 */
export function validateKey(key: string): string {
  if (typeof key !== "string") {
    throw new SessiondError("INVALID_KEY", `Invalid session key: expected a string, got ${typeof key}`, {
      details: { reason: "not a string" },
    });
  }
  if (key.length === 0) invalidKey("the key is empty", key);
  const problem = textProblem(key, MAX_KEY_BYTES);
  if (problem)
    invalidKey(problem === "too long" ? `the key is longer than ${MAX_KEY_BYTES} UTF-8 bytes` : problem, key);
  return key;
}

/** Why a key (or part of one) is not usable, or undefined when it is. */
function textProblem(text: string, maxBytes: number): string | undefined {
  // A string of more code units than maxBytes is always longer in UTF-8; skip the byte count.
  const bytes = text.length > maxBytes ? text.length : Buffer.byteLength(text, "utf8");
  if (bytes > maxBytes) return "too long";
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code <= 0x1f || (code >= 0x7f && code <= 0x9f) || code === 0x2028 || code === 0x2029) {
      return `control character ${hex(code)} at index ${i}`;
    }
    if (code >= 0xd800 && code <= 0xdfff) {
      const next = text.charCodeAt(i + 1);
      if (code <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        i++;
        continue;
      }
      return `lone surrogate ${hex(code)} at index ${i}`;
    }
  }
  return undefined;
}

/** A key component: a non-empty string, else INVALID_ARGUMENT naming the envelope or config field. */
export function requireField(value: unknown, field: string): string {
  if (typeof value !== "string" || value.length === 0) {
    throw new SessiondError("INVALID_ARGUMENT", `${field} must be a non-empty string`, {
      details: { field },
    });
  }
  return value;
}

/**
 * A name a caller gives one part of a key: a non-empty string of at most MAX_KEY_PART_BYTES, without
 * control characters, and nothing path-like (`/`, `\\`, `.` or `..`); INVALID_KEY naming `field` otherwise.
 */
export function requireKeyPart(value: unknown, field: string): string {
  const part = requireField(value, field);
  let problem = textProblem(part, MAX_KEY_PART_BYTES);
  if (problem === "too long") problem = `longer than ${MAX_KEY_PART_BYTES} UTF-8 bytes`;
  else if (!problem && (/[/\\]/.test(part) || part === "." || part === "..")) problem = "a name, not a path";
  if (!problem) return part;
  throw new SessiondError("INVALID_KEY", `${field} ${JSON.stringify(part.slice(0, 64))}: ${problem}`, {
    details: { field, reason: problem },
  });
}
