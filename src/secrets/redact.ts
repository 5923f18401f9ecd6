import { mayHoldSecret } from "./prefilter.js";
import { presetSecretRanges } from "./preset.js";
import { REDACTED, SHAPES } from "./shapes.js";
import { replaceLongRuns, tokenRuns } from "./token-runs.js";

const TEXT_SHAPES = SHAPES.filter((shape) => shape.scope !== "run");
const RUN_SHAPES = SHAPES.filter((shape) => shape.scope === "run");

function redactRun(run: string): string {
  let out = run;
  for (const { pattern, replace } of RUN_SHAPES) out = out.replace(pattern, replace);
  return out;
}

// How far a reported range is widened: the preset's AWS rule reports the value's length from the key's start.
const TOKEN_CHAR = /[A-Za-z0-9_+/=-]/;

/**
 * Scrubs secrets from free text, replacing each whole secret with `[redacted]` (never a mask that keeps a
 * prefix or suffix): what `@secretlint/secretlint-rule-preset-recommend` finds, then sessiond's own shapes
 * (told prefixes, headers, `name=value` assignments, random-looking tokens). Each is tried only on text
 * that holds what its matches must hold, and a text the prefilter clears (prefilter.ts: most chat) is returned
 * as it is before any runs. Run it before anything reaches storage, a log, a title or a file name. Idempotent.
 */
export function redactSecrets(text: string): string {
  return mayHoldSecret(text) ? scanSecrets(text) : text;
}

/** `redactSecrets` without the prefilter: every scanner whose own words the text holds runs. */
export function scanSecrets(text: string): string {
  let out = text;
  // Every secret the preset knows has a run of 20+ token characters or a PEM header; text without one (most
  // chat) skips its 27 scanners. The shorter shapes it knows (URL passwords, Slack tokens) are in SHAPES too.
  const runs = tokenRuns(text);
  const lower = text.toLowerCase();
  if (runs.presetCandidate) {
    const ranges = presetSecretRanges(text, lower);
    if (ranges.length > 0) out = replaceRanges(text, ranges);
  }
  // Replacing only takes text away (and adds `[redacted]`), so what the input lacks no later step can need.
  for (const { pattern, replace, needs } of TEXT_SHAPES) {
    if (needs.longToken && !runs.long) continue;
    if (needs.words && !needs.words.some((word) => lower.includes(word))) continue;
    out = out.replace(pattern, replace);
  }
  return runs.long ? replaceLongRuns(out, redactRun) : out;
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
