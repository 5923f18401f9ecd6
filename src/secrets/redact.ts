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
 * that holds what its matches must hold. Run it before anything reaches storage, a log, a title or a file
 * name. Idempotent.
 */
export function redactSecrets(text: string): string {
  if (clean.has(text)) return text;
  const out = scrub(text);
  if (out === text) remember(text);
  return out;
}

/**
 * Recent texts found to hold no secret, bounded by characters: a turn's input is scrubbed for the inbox and
 * again as its entry, and only secret-free text is kept here (a secret is not held longer than its turn).
 */
const clean = new Set<string>();
let cleanChars = 0;
const CLEAN_MAX_CHARS = 256 * 1024;
const CLEAN_MAX_TEXT_CHARS = 16 * 1024;

function remember(text: string): void {
  if (text.length > CLEAN_MAX_TEXT_CHARS) return;
  clean.add(text);
  cleanChars += text.length;
  for (const old of clean) {
    if (cleanChars <= CLEAN_MAX_CHARS) break;
    clean.delete(old);
    cleanChars -= old.length;
  }
}

function scrub(text: string): string {
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
