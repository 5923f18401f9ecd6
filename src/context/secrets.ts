/** What a scrubbed secret is replaced with: obviously not data, so it cannot be replayed as a value. */
export const REDACTED = "[redacted]";

// Exact key names (after normalising) that hold credentials but have no telling suffix.
const CREDENTIAL_KEYS = new Set(["auth", "pass", "pwd", "pin", "cvv", "ssn", "sessionid", "otp"]);
// Suffixes of normalised key names: `db_password`, `refreshToken`, `x-api-key`, `client_secret`…
const CREDENTIAL_SUFFIXES = [
  "token",
  "secret",
  "password",
  "passwd",
  "passphrase",
  "apikey",
  "privatekey",
  "secretkey",
  "accesskey",
  "authorization",
  "cookie",
  "credential",
  "credentials",
  "signature",
];

/**
 * Whether a key names a credential, at any nesting level: case, `-`, `_`, `.` and spaces are ignored, so
 * `api_key`, `apiKey`, `API-KEY` and `x-api-key` all match. Errs on the side of dropping.
 */
export function isCredentialKey(key: string): boolean {
  const normalised = key.toLowerCase().replace(/[-_.\s]/g, "");
  if (CREDENTIAL_KEYS.has(normalised)) return true;
  return CREDENTIAL_SUFFIXES.some((suffix) => normalised.endsWith(suffix));
}

// Matched from the telling word on (not from the start of `db_password`): a pattern that scans back over
// the whole key from every word boundary is quadratic on text like `a-a-a-…`.
const KEY_NAMES =
  "(?:password|passwd|pwd|passphrase|secret|token|api[_-]?key|private[_-]?key|access[_-]?key|credentials?)";

interface Shape {
  pattern: RegExp;
  replace: (match: string, ...groups: string[]) => string;
}

const whole = (): string => REDACTED;

// Order matters: private-key blocks first (their body could look like other shapes), and key=value pairs
// last so a shape inside a value is already gone.
const SHAPES: Shape[] = [
  // A PEM block, or a cut one that never reaches its END line: everything from BEGIN on goes.
  {
    pattern:
      /-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|[\s\S]*$)/g,
    replace: whole,
  },
  // `scheme://user:password@host`: the password only.
  {
    pattern: /(:\/\/[^\s/:@]+:)[^\s/@]+@/g,
    replace: (_m, prefix = "") => `${prefix}${REDACTED}@`,
  },
  // Header lines: the whole value, whatever its scheme (`Basic`, `Digest`, `token`…).
  {
    pattern: /\b((?:proxy-)?authorization["']?\s*[:=]\s*["']?)(?!\[redacted\])(?:[A-Za-z]+\s+)?[^\s"',;]+/gi,
    replace: (_m, prefix = "") => `${prefix}${REDACTED}`,
  },
  {
    pattern: /\b((?:set-)?cookie["']?\s*[:=]\s*)(?!["']?\[redacted\])("[^"\r\n]*"?|[^\r\n]+)/gi,
    replace: (_m, prefix = "", value = "") =>
      value.startsWith('"') ? `${prefix}"${REDACTED}"` : `${prefix}${REDACTED}`,
  },
  { pattern: /\bBearer\s+(?!\[redacted\])[A-Za-z0-9\-._~+/]{8,}=*/g, replace: () => `Bearer ${REDACTED}` },
  { pattern: /\bsk-[A-Za-z0-9_-]{16,}/g, replace: whole },
  { pattern: /\b[rsp]k_(?:live|test)_[A-Za-z0-9]{10,}/g, replace: whole },
  { pattern: /\bgh[pousr]_[A-Za-z0-9]{20,}/g, replace: whole },
  { pattern: /\bgithub_pat_[A-Za-z0-9_]{20,}/g, replace: whole },
  { pattern: /\bglpat-[A-Za-z0-9_-]{20,}/g, replace: whole },
  { pattern: /\bxox[abposr]-[A-Za-z0-9-]{10,}/g, replace: whole },
  { pattern: /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g, replace: whole },
  { pattern: /\bAIza[0-9A-Za-z_-]{35}/g, replace: whole },
  { pattern: /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g, replace: whole },
  // `password=…`, `api_key: …`, `"client_secret": "…"`: the key stays, the whole value goes.
  {
    pattern: new RegExp(
      String.raw`(${KEY_NAMES}\b["']?\s*[:=]\s*)(?!["']?\[redacted\])("(?:[^"\\]|\\.)*(?:"|$)|'[^']*(?:'|$)|[^\s&;,"'}\]]+)`,
      "gi",
    ),
    replace: (_m, prefix = "", value = "") => {
      const quote = value.startsWith('"') || value.startsWith("'") ? value[0] : "";
      return `${prefix}${quote}${REDACTED}${quote}`;
    },
  },
];

/**
 * Scrubs well-known secret shapes from free text, replacing each whole secret with `[redacted]` (never a
 * mask that keeps a prefix or suffix). Run it before anything reaches storage or a log.
 */
export function redactSecrets(text: string): string {
  let out = text;
  for (const { pattern, replace } of SHAPES) out = out.replace(pattern, replace);
  return out;
}
