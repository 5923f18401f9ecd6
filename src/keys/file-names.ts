import { createHash } from "node:crypto";
import { redactSecrets } from "../secrets/index.js";
import { validateKey } from "./validate.js";

// Rust's char::is_alphanumeric, which the seed systems use: Alphabetic or Numeric.
const NOT_ALNUM_RUN = /[^\p{Alphabetic}\p{N}]+/gu;
const NOT_ZEROCLAW_SAFE = /[^\p{Alphabetic}\p{N}_-]/gu;

/**
 * CrabTalk's `sender_slug`: `TG:user-123` → `tg-user-123`, `a::b` → `a-b`, `:::` → ``, `Ü` stays `Ü`
 * (ASCII-only lowercasing, as Rust's `to_ascii_lowercase`). Lossy. A secret in `s` becomes `redacted`
 * first: a file name must never carry one.
 */
export function crabtalkSlug(s: string): string {
  return redactSecrets(s)
    .replace(NOT_ALNUM_RUN, "-")
    .replace(/[A-Z]+/g, (upper) => upper.toLowerCase())
    .replace(/^-+|-+$/g, "");
}

/** ZeroClaw's `sanitize_session_key`: `../tenant\user/channel` → `___tenant_user_channel`. Lossy, idempotent. */
export function zeroclawSanitizeKey(s: string): string {
  return s.replace(NOT_ZEROCLAW_SAFE, "_");
}

const SLUG_MAX = 64;
const HASH_CHARS = 32;

/**
 * A file-name stem for a valid key: `[a-z0-9-]` only, never starting with `.`, at most 97 bytes.
 * A readable ASCII slug (possibly empty) then the first 128 bits of sha256(key) in hex, so keys that
 * share a slug (case, punctuation, non-ASCII, truncation) still get different names. A secret in the key
 * is left out of the slug.
 */
export function safeFileStem(key: string): string {
  validateKey(key);
  const slug = redactSecrets(key)
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .slice(0, SLUG_MAX)
    .replace(/^-+|-+$/g, "");
  const hash = createHash("sha256").update(key, "utf8").digest("hex").slice(0, HASH_CHARS);
  return slug === "" ? hash : `${slug}-${hash}`;
}
