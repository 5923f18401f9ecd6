import { redactSecrets } from "../secrets/index.js";
import type { SearchTerm } from "./query.js";
import { NON_ASCII } from "./rank.js";

/** How many characters of a message a snippet shows around its first match. */
export const SNIPPET_CHARS = 200;
const LEAD_CHARS = 60;

const HTML_ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c] ?? c);
}

/**
 * Text folded as the indexes fold it (lowercase, diacritics removed), with each folded char's source index;
 * `from` is absent for ASCII text (the usual case), which folds to its lowercase char for char.
 */
export function foldText(text: string): { folded: string; from?: number[] } {
  if (!NON_ASCII.test(text)) return { folded: text.toLowerCase() };
  let folded = "";
  const from: number[] = [];
  let at = 0;
  for (const char of text) {
    const plain = char.normalize("NFD").replace(/\p{M}/gu, "").toLowerCase();
    for (let i = 0; i < plain.length; i++) from.push(at);
    folded += plain;
    at += char.length;
  }
  from.push(at);
  return { folded, from };
}

const WORD_CHAR = /[\p{L}\p{N}_]/u;

/** The ranges [start, end) of `text` where a term occurs, word starts preferred, merged and sorted. */
export function matchRanges(text: string, terms: readonly SearchTerm[]): Array<[number, number]> {
  const { folded, from } = foldText(text);
  const ranges: Array<[number, number]> = [];
  for (const term of terms) {
    const needle = foldText(term.text).folded;
    if (needle === "") continue;
    const all: number[] = [];
    const starts: number[] = [];
    for (let i = folded.indexOf(needle); i >= 0; i = folded.indexOf(needle, i + needle.length)) {
      all.push(i);
      if (i === 0 || !WORD_CHAR.test(folded.charAt(i - 1))) starts.push(i);
    }
    for (const i of starts.length > 0 ? starts : all)
      ranges.push(from ? [from[i] ?? 0, from[i + needle.length] ?? text.length] : [i, i + needle.length]);
  }
  ranges.sort((a, b) => a[0] - b[0]);
  const merged: Array<[number, number]> = [];
  for (const range of ranges) {
    const last = merged.at(-1);
    if (last && range[0] <= last[1]) last[1] = Math.max(last[1], range[1]);
    else merged.push([...range]);
  }
  return merged;
}

/**
 * The snippet of a hit: secret-shaped strings masked first (stored text is redacted already; this holds for
 * text stored before that), then about 200 characters around the first match, escaped for HTML, with each
 * match in `<mark>…</mark>` and `…` where the text was cut.
 */
export function makeSnippet(content: string, terms: readonly SearchTerm[]): string {
  const text = redactSecrets(content);
  const ranges = matchRanges(text, terms);
  const first = ranges[0]?.[0] ?? 0;
  let start = Math.max(0, first - LEAD_CHARS);
  if (start > 0) {
    // Start at the first whole word of the lead.
    const space = text.indexOf(" ", start - 1);
    if (space >= 0 && space < first) start = space + 1;
  }
  let end = Math.min(text.length, start + SNIPPET_CHARS);
  if (end < text.length) {
    const space = text.lastIndexOf(" ", end);
    if (space > first) end = space;
  }
  let out = start > 0 ? "…" : "";
  let at = start;
  for (const [s, e] of ranges) {
    if (e <= start || s >= end) continue;
    const from = Math.max(s, start);
    const to = Math.min(e, end);
    out += `${escapeHtml(text.slice(at, from))}<mark>${escapeHtml(text.slice(from, to))}</mark>`;
    at = to;
  }
  out += escapeHtml(text.slice(at, end));
  return end < text.length ? `${out}…` : out;
}
