import { presetSecretRanges } from "./preset.js";
import { REDACTED, SHAPES } from "./shapes.js";

// Every secret the preset knows has a run of 20+ token characters or a PEM header; text without one (most
// chat) skips its 27 scanners. The shorter shapes it knows (URL passwords, Slack tokens) are in SHAPES too.
const PRESET_GATE = /[A-Za-z0-9_+=-]{20}|-----BEGIN/;
// How far a reported range is widened: the preset's AWS rule reports the value's length from the key's start.
const TOKEN_CHAR = /[A-Za-z0-9_+/=-]/;

/**
 * Scrubs secrets from free text, replacing each whole secret with `[redacted]` (never a mask that keeps a
 * prefix or suffix): sessiond's own shapes first (told prefixes, headers, `name=value` assignments,
 * random-looking tokens), then what `@secretlint/secretlint-rule-preset-recommend` still finds. Run it
 * before anything reaches storage, a log, a title or a file name. Idempotent.
 */
export function redactSecrets(text: string): string {
  let out = text;
  if (PRESET_GATE.test(text)) {
    const ranges = presetSecretRanges(text);
    if (ranges.length > 0) out = replaceRanges(text, ranges);
  }
  for (const { pattern, replace } of SHAPES) out = out.replace(pattern, replace);
  return out;
}

function replaceRanges(text: string, ranges: ReadonlyArray<readonly [number, number]>): string {
  const sorted = [...ranges].sort((a, b) => a[0] - b[0]);
  let out = "";
  let at = 0;
  for (const [start, reportedEnd] of sorted) {
    let end = Math.max(reportedEnd, at);
    while (end < text.length && TOKEN_CHAR.test(text.charAt(end))) end++;
    if (start >= at) out += `${text.slice(at, start)}${REDACTED}`;
    at = Math.max(at, end);
  }
  return out + text.slice(at);
}
