import { COMMAND_SHAPES } from "./command-shapes.js";
import { REDACTED } from "./redacted.js";

export { REDACTED };

interface ShapeBase {
  pattern: RegExp;
  replace: (match: string, ...groups: string[]) => string;
  /**
   * What a text must hold for the shape to be tried at all (see `redact.ts`): one of these words (lowercase),
   * and/or a run of 15+ token characters (`tokenRuns`). Both are cheap to look for; the patterns are not.
   */
  needs: { words?: readonly string[]; longToken?: true };
}

/**
 * A shape whose matches lie inside a run of 15+ token characters (`[A-Za-z0-9_+/=.:-]`): it is tried on each
 * such run alone rather than on the whole text, which costs a fraction.
 */
interface RunShape extends ShapeBase {
  scope: "run";
}

interface TextShape extends ShapeBase {
  scope?: undefined;
  /**
   * Strings, in the case the pattern matches them, one of which every match holds: a text holding none of
   * any shape's, and no run of 15+ token characters, skips every scanner (prefilter.ts). It must be true of
   * every match the pattern can make, or a secret gets through: a pattern with the `i` flag may only name
   * characters that have no case.
   */
  telltales: readonly string[];
}

export type Shape = RunShape | TextShape;

// One of these is in every match of the `name=value` shape.
const KEY_NAME_WORDS = ["pass", "pwd", "pw", "secret", "token", "key", "credential", "sig"];

const whole = (): string => REDACTED;
const hasDigit = /[0-9]/;

// Matched from the telling word on (not from the start of `db_password`): a pattern that scans back over
// the whole key from every word boundary is quadratic on text like `a-a-a-…`.
const KEY_NAMES = [
  "password",
  "passwd",
  "pwd",
  "passphrase",
  "secret",
  "token",
  "api[_\\s-]?key",
  "private[_-]?key(?:[_-]?id)?",
  "access[_-]?key",
  "account[_-]?key",
  "shared[_-]?access[_-]?(?:key|signature)",
  "credentials?",
  // `DB_PASS=`, `{"pass": …}`, `DB_PW=`: only as a word of its own (not `bypass`, `compass`).
  "(?<![A-Za-z])pass(?![A-Za-z])",
  "(?<![A-Za-z])pw(?![A-Za-z])",
  // An Azure SAS signature in a query string.
  "(?<=[?&])sig",
].join("|");

// What may follow the telling word in a key's name: `SECRET_KEY`, `secret_key_base`, `secretKey`,
// `password_hash`. A closed list, so `token_count` and `max_tokens` stay plain numbers.
const KEY_SUFFIXES = "(?:[_.-]?(?:key|base|value|hash|b64|base64|string|str|text|plain|raw|hex|data|id))*";

// `=`, `:`, and `:=` (make), `=>` (Ruby, PHP); a key quoted or with an escaped quote (JSON inside a string).
const ASSIGN = String.raw`\\?["']?\s*(?::=|=>|[:=])\s*`;

// Service tokens told by their prefix. A prefix may follow `_` or `-` (`lookup_sk-…` as a tool name), not a
// letter or digit; a match without a digit is a word (`sk-learn-…`), not a token.
const PREFIXED = [
  "sk-[A-Za-z0-9_-]{16,}", // OpenAI, Anthropic (sk-ant-), OpenRouter, DeepSeek…
  "[rsp]k_(?:live|test)_[A-Za-z0-9]{10,}", // Stripe
  "whsec_[A-Za-z0-9]{20,}",
  "gh[pousr]_[A-Za-z0-9]{20,}",
  "github_pat_[A-Za-z0-9_]{20,}",
  "glpat-[A-Za-z0-9_-]{20,}",
  "xox[abposre]-[A-Za-z0-9-]{10,}",
  "xapp-[A-Za-z0-9-]{10,}",
  "(?:A3T[A-Z0-9]|AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA)[0-9A-Z]{16}(?![A-Za-z0-9])",
  "AIza[0-9A-Za-z_-]{35}",
  String.raw`ya29\.[0-9A-Za-z_-]{20,}`,
  String.raw`eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`,
  "npm_[A-Za-z0-9]{36}",
  "hf_[A-Za-z0-9]{30,}",
  String.raw`SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}`, // SendGrid
  "SK[0-9a-fA-F]{32}(?![A-Za-z0-9])", // Twilio API key
  String.raw`[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}`, // Discord bot token
  "[0-9]{5,16}:AA[A-Za-z0-9_-]{33}", // Telegram bot token
  "key-[0-9a-f]{32}(?![A-Za-z0-9])", // Mailgun
  "[0-9a-f]{32}-us[0-9]{1,2}(?![A-Za-z0-9])", // Mailchimp
  "shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}",
  "sq0(?:atp|csp)-[0-9A-Za-z_-]{22,43}", // Square
  "pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}",
  "dop_v1_[a-f0-9]{64}", // DigitalOcean
  "dapi[a-f0-9]{32}", // Databricks
  "glc_[A-Za-z0-9+/]{32,}={0,2}", // Grafana Cloud
  "glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}",
  String.raw`hv[sb]\.[A-Za-z0-9_-]{24,}`, // HashiCorp Vault
  "lin_api_[A-Za-z0-9]{40}", // Linear
  "(?:secret|ntn)_[A-Za-z0-9]{40,}", // Notion
  "gsk_[A-Za-z0-9]{40,}", // Groq
  "dckr_pat_[A-Za-z0-9_-]{20,}",
  "AGE-SECRET-KEY-1[0-9A-Z]{58}",
  // From gitleaks' rules: tokens whose body alone (hex, one case) would pass for an id.
  "do[opr]_v1_[a-f0-9]{64}",
  String.raw`v1\.0-[a-f0-9]{24}-[a-f0-9]{146}`, // Cloudflare origin CA
  String.raw`dt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}`, // Dynatrace
  "gl(?:dt|ft|soat|rt|ptt|imt|agent|oas|cbt|ffct)-[A-Za-z0-9_-]{20,}", // GitLab's other tokens
  "GR1348941[A-Za-z0-9_-]{20}",
  "s-s4t2(?:ud|af)-[a-f0-9]{64}",
  "NR(?:AK|JS|II)-[A-Za-z0-9-]{19,32}", // New Relic
  "API-[A-Z0-9]{26}(?![A-Za-z0-9])", // Octopus Deploy
  "pul-[a-f0-9]{40}",
  "rdme_[a-z0-9]{70}",
  "rubygems_[a-f0-9]{48}",
  "sntry[us]_[A-Za-z0-9+/=_]{40,}",
  "sm_(?:pat|aat|sat)_[A-Za-z0-9]{16}",
  "shippo_(?:live|test)_[a-fA-F0-9]{40}",
  "sgp_(?:(?:[a-fA-F0-9]{16}|local)_)?[a-fA-F0-9]{40}",
  "LTAI[A-Za-z0-9]{20}",
  String.raw`[a-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70}`, // Terraform Cloud
  String.raw`pat[A-Za-z0-9]{14}\.[a-f0-9]{64}`, // Airtable
  "A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}", // 1Password
  String.raw`[ps]k\.eyJ[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{20,}`, // Mapbox
  "pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_=.-]{32,64}",
  "PMAK-[a-f0-9]{24}-[a-f0-9]{34}",
  "pnu_[A-Za-z0-9]{36}",
  "xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}",
  "tk-us-[A-Za-z0-9_-]{48}",
  "pplx-[A-Za-z0-9]{48}",
  "ico-[A-Za-z0-9]{32}",
  "HRKU-AA[A-Za-z0-9_-]{58}",
  "fio-u-[A-Za-z0-9_=-]{64}",
  "fo1_[A-Za-z0-9_-]{43}",
  "FLWSECK_TEST-[a-h0-9]{32}-X",
  "EZ[AT]K[A-Za-z0-9]{54}",
  String.raw`dp\.pt\.[A-Za-z0-9]{43}`, // Doppler
  "duffel_(?:test|live)_[A-Za-z0-9_=-]{43}",
  "CLOJARS_[A-Za-z0-9]{60}",
  "AKCp[A-Za-z0-9]{69}",
  "ABSK[A-Za-z0-9+/]{109,269}={0,2}",
  String.raw`xoxe(?:\.xox[bp])?-[0-9]-[A-Z0-9]{146,166}`,
].join("|");

/**
 * Shannon entropy of `text` in bits per character: about 4.5–5 for a random 32–64 character token,
 * about 4 or less for identifiers and paths made of words.
 */
export function entropyBits(text: string): number {
  const counts = new Map<string, number>();
  for (const ch of text) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let bits = 0;
  for (const n of counts.values()) {
    const p = n / text.length;
    bits -= p * Math.log2(p);
  }
  return bits;
}

function classCounts(text: string): { upper: number; lower: number; digit: number } {
  let upper = 0;
  let lower = 0;
  let digit = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 65 && c <= 90) upper++;
    else if (c >= 97 && c <= 122) lower++;
    else if (c >= 48 && c <= 57) digit++;
  }
  return { upper, lower, digit };
}

/**
 * A random-looking token: mixed case with digits, and entropy at `minBits` or more. Hex (hashes, ids),
 * ULIDs and UUIDs are single-case, so they stay.
 */
function looksRandom(token: string, minBits: number): boolean {
  const { upper, lower, digit } = classCounts(token);
  return upper >= 2 && lower >= 2 && digit >= 2 && entropyBits(token) >= minBits;
}

/** `Basic <base64>` is a credential only if it decodes to printable `user:password`. */
function isBasicCredential(encoded: string): boolean {
  const decoded = Buffer.from(encoded, "base64").toString("latin1");
  return /^[\x20-\x7e]*:[\x20-\x7e]+$/.test(decoded);
}

// Order matters: private-key blocks first (their body could look like other shapes), then URLs and headers,
// key=value pairs, and the token shapes last (`redact.ts` runs those on each long run of token characters).
export const SHAPES: readonly Shape[] = [
  // A PEM block, or a cut one that never reaches its END line: everything from BEGIN on goes.
  {
    pattern:
      /-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|[\s\S]*$)/g,
    replace: whole,
    needs: { words: ["private key"] },
    telltales: ["-----BEGIN"],
  },
  // `scheme://user:password@host` (the user may be empty: `redis://:pw@host`): the password only, up to the
  // last `@` before the host, so a password holding `@` or `/` goes whole. A port before a path's `@`
  // (`https://registry:443/@scope/pkg`) is not a password.
  {
    pattern: /(:\/\/[^\s/:@]*:)(?!\[redacted\]@)(\S{1,200})@(?=[A-Za-z0-9][A-Za-z0-9.-]*(?:[:/?#]|\s|$))/g,
    replace: (match, prefix = "", password = "") =>
      /^\d+(?:\/|$)/.test(password) ? match : `${prefix}${REDACTED}@`,
    needs: { words: ["://"] },
    telltales: ["://"],
  },
  // Header lines: the whole value, whatever its scheme (`Basic`, `Digest`, `token`…).
  {
    pattern: /\b((?:proxy-)?authorization["']?\s*[:=]\s*["']?)(?!\[redacted\])(?:[A-Za-z]+\s+)?[^\s"',;]+/gi,
    replace: (_m, prefix = "") => `${prefix}${REDACTED}`,
    needs: { words: ["authorization"] },
    telltales: [":", "="],
  },
  {
    pattern: /\b((?:set-)?cookie["']?\s*[:=]\s*)(?!\s*["']?\[redacted\])("[^"\r\n]*"?|[^\r\n]+)/gi,
    replace: (_m, prefix = "", value = "") =>
      value.startsWith('"') ? `${prefix}"${REDACTED}"` : `${prefix}${REDACTED}`,
    needs: { words: ["cookie"] },
    telltales: [":", "="],
  },
  {
    pattern: /\bBearer\s+(?!\[redacted\])[A-Za-z0-9\-._~+/]{8,}=*/g,
    replace: () => `Bearer ${REDACTED}`,
    needs: { words: ["bearer"] },
    telltales: ["Bearer"],
  },
  {
    pattern: /\bBasic\s+([A-Za-z0-9+/]{4,}={0,2})(?![A-Za-z0-9+/=])/g,
    replace: (match, encoded = "") => (isBasicCredential(encoded) ? `Basic ${REDACTED}` : match),
    needs: { words: ["basic"] },
    telltales: ["Basic"],
  },
  // Incoming-webhook URLs carry their secret in the path.
  {
    pattern:
      /https:\/\/(?:hooks\.slack\.com\/(?:services|workflows|triggers)|(?:ptb\.|canary\.)?discord(?:app)?\.com\/api\/webhooks)\/[A-Za-z0-9/_-]+/g,
    replace: whole,
    needs: { words: ["https://"], longToken: true },
    telltales: ["https://"],
  },
  // `password=…`, `api_key: …`, `"client_secret": "…"`, `AccountKey=…`: the key stays, the whole value goes.
  {
    pattern: new RegExp(
      String.raw`((?:${KEY_NAMES})${KEY_SUFFIXES}\b${ASSIGN})(?!\\?["']?\[redacted\])(\\"(?:[^"\\]|\\[^"])*\\"|"(?:[^"\\]|\\.)*(?:"|$)|'[^']*(?:'|$)|[^\s&;,"'}\]=>][^\s&;,"'}\]]*)`,
      "gi",
    ),
    replace: (_m, prefix = "", value = "") => {
      const quote = value.startsWith('\\"')
        ? '\\"'
        : value.startsWith('"') || value.startsWith("'")
          ? value[0]
          : "";
      return `${prefix}${quote}${REDACTED}${quote}`;
    },
    needs: { words: KEY_NAME_WORDS },
    telltales: [":", "="],
  },
  ...COMMAND_SHAPES,
  {
    pattern: new RegExp(`(?<![A-Za-z0-9])(?:${PREFIXED})`, "g"),
    replace: (match) => (hasDigit.test(match) ? REDACTED : match),
    needs: {},
    scope: "run",
  },
  // A bare key in base64 (slashes included) of 40 to 128 characters: an AWS secret access key, an Azure key.
  {
    pattern: /(?<![A-Za-z0-9+/=])[A-Za-z0-9+/]{40,128}={0,2}(?![A-Za-z0-9+/=])/g,
    replace: (match) => (looksRandom(match, 4.3) ? REDACTED : match),
    needs: {},
    scope: "run",
  },
  // Any other random-looking token of 32 to 256 characters.
  {
    pattern: /(?<![A-Za-z0-9_-])[A-Za-z0-9_-]{32,256}(?![A-Za-z0-9_-])/g,
    replace: (match) => (looksRandom(match, 4.0) ? REDACTED : match),
    needs: {},
    scope: "run",
  },
];
