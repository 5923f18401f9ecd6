import { SessiondError } from "../model/errors.js";

export const MAX_KEY_BYTES = 512;

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
  // A string of more code units than MAX_KEY_BYTES is always longer in UTF-8; skip the byte count.
  const bytes = key.length > MAX_KEY_BYTES ? key.length : Buffer.byteLength(key, "utf8");
  if (bytes > MAX_KEY_BYTES) {
    invalidKey(`the key is longer than ${MAX_KEY_BYTES} UTF-8 bytes`, key);
  }
  for (let i = 0; i < key.length; i++) {
    const code = key.charCodeAt(i);
    if (code <= 0x1f || (code >= 0x7f && code <= 0x9f) || code === 0x2028 || code === 0x2029) {
      invalidKey(`control character ${hex(code)} at index ${i}`, key);
    }
    if (code >= 0xd800 && code <= 0xdfff) {
      const next = key.charCodeAt(i + 1);
      if (code <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        i++;
        continue;
      }
      invalidKey(`lone surrogate ${hex(code)} at index ${i}`, key);
    }
  }
  return key;
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
