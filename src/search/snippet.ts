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

/** Texts longer than this are cut to a window around their first match before they are masked. */
const WHOLE_CHARS = 16 * 1024;
/** The window kept either side of the first match: wider than any credential the maskers look for. */
const WINDOW_CHARS = 4 * 1024;
/** How much of a long text is searched for its first match at a time. */
const SCAN_CHARS = 64 * 1024;

/**
 * Where the first match of a long text is, read a chunk at a time (so a match near the start costs one
 * chunk): its index, or 0 when none is found.
 */
function firstMatchOf(text: string, terms: readonly SearchTerm[]): number {
  for (let at = 0; at < text.length; at += SCAN_CHARS) {
    const range = matchRanges(text.slice(at, at + SCAN_CHARS + SEARCH_TERM_CHARS), terms)[0];
    if (range) return at + range[0];
  }
  return 0;
}

/** The longest a term can be (the search text's limit): chunks overlap by this much. */
const SEARCH_TERM_CHARS = 200;

/**
 * The snippet of a hit: secret-shaped strings masked first (stored text is redacted already; this holds for
 * text stored before that), then about 200 characters around the first match, escaped for HTML, with each
 * match in `<mark>…</mark>` and `…` where the text was cut. A long text is cut first to a window around its
 * first match, so that a snippet of a message of a megabyte costs what one of a few kilobytes does.
 */
export function makeSnippet(content: string, terms: readonly SearchTerm[]): string {
  if (content.length <= WHOLE_CHARS) return snippetOf(content, terms, false, false);
  const first = firstMatchOf(content, terms);
  const from = Math.max(0, first - WINDOW_CHARS);
  const to = Math.min(content.length, first + WINDOW_CHARS);
  return snippetOf(content.slice(from, to), terms, from > 0, to < content.length);
}

function snippetOf(
  content: string,
  terms: readonly SearchTerm[],
  cutBefore: boolean,
  cutAfter: boolean,
): string {
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
  let out = start > 0 || cutBefore ? "…" : "";
  let at = start;
  for (const [s, e] of ranges) {
    if (e <= start || s >= end) continue;
    const from = Math.max(s, start);
    const to = Math.min(e, end);
    out += `${escapeHtml(text.slice(at, from))}<mark>${escapeHtml(text.slice(from, to))}</mark>`;
    at = to;
  }
  out += escapeHtml(text.slice(at, end));
  return end < text.length || cutAfter ? `${out}…` : out;
}
