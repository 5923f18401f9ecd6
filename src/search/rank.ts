import { CJK } from "./indexed-text.js";
import { RECENCY_HALF_LIFE_MS, type SearchTerm } from "./query.js";

const K1 = 1.2;
const B = 0.75;

export const NON_ASCII = /\P{ASCII}/u;

/** Text folded as the indexes fold it: lowercase, diacritics removed (unicode61 remove_diacritics 2). */
export function fold(text: string): string {
  const lower = text.toLowerCase();
  if (!NON_ASCII.test(lower)) return lower;
  const decomposed = lower.normalize("NFD");
  return decomposed === lower ? lower : decomposed.replace(/\p{M}/gu, "");
}

/**
 * The folded words of a text, as the SQLite word index (unicode61) splits them: letters, numbers and
 * private-use characters; everything else separates. ASCII text, the usual case, takes a quicker path.
 */
export function foldedWords(text: string): string[] {
  const folded = fold(text);
  return (NON_ASCII.test(folded) ? folded.match(/[\p{L}\p{N}\p{Co}]+/gu) : folded.match(/[a-z0-9]+/g)) ?? [];
}

/** BM25's inverse document frequency of a term in `df` of `n` documents. */
export function idf(n: number, df: number): number {
  return Math.log(1 + (Math.max(0, n - df) + 0.5) / (df + 0.5));
}

/** One term's share of a document's BM25 (k1 1.2, b 0.75): `tf` occurrences in `length` words. */
export function bm25Part(termIdf: number, tf: number, length: number, avgLength: number): number {
  return (termIdf * tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * length) / avgLength));
}

/** A match's score: its (negated, lower is better) relevance, halved every 30 days of age at `now`. */
export function recencyScore(rank: number, ts: number, now: number): number {
  return (rank * RECENCY_HALF_LIFE_MS) / (RECENCY_HALF_LIFE_MS + Math.max(0, now - ts));
}

/** What one term matches in a message: a word, a phrase, a prefix's words or CJK text. */
export interface TermMatcher {
  term: SearchTerm;
  /** For the last word typed: the indexed words it is a prefix of (itself included when indexed). */
  expansion?: ReadonlySet<string>;
  /** The term folded, and (for phrases) its folded words. */
  folded: string;
  words: string[];
}

export function termMatcher(term: SearchTerm, expansion?: ReadonlySet<string>): TermMatcher {
  const folded = fold(term.text);
  return { term, folded, words: foldedWords(folded), ...(expansion ? { expansion } : {}) };
}

/** A message as the matchers read it: its folded text, its words split only when a phrase needs them. */
export class FoldedText {
  readonly folded: string;
  private split: string[] | undefined;
  constructor(text: string) {
    this.folded = fold(text);
  }
  get words(): string[] {
    this.split ??= foldedWords(this.folded);
    return this.split;
  }
}

const WORD_CHAR = /[\p{L}\p{N}\p{Co}]/u;

/** Whether `hay`'s UTF-16 unit at `i` is a word character (false outside it); ASCII without the regex. */
function isWordCharAt(hay: string, i: number): boolean {
  const code = hay.charCodeAt(i);
  if (code < 128)
    return (code >= 97 && code <= 122) || (code >= 48 && code <= 57) || (code >= 65 && code <= 90);
  return !Number.isNaN(code) && WORD_CHAR.test(hay.charAt(i));
}

/**
 * How often a term occurs in a message: a word as a whole word, a prefix as a word among its expansion,
 * a phrase as consecutive words, CJK text as a substring (the indexes' rules).
 */
export function occurrences(m: TermMatcher, text: FoldedText): number {
  const hay = text.folded;
  const needle = m.folded;
  if (needle === "") return 0;
  const cjk = CJK.test(needle);
  if (!cjk && m.words.length > 1) {
    // Most phrases are written with single spaces: counted on the text; otherwise on its words.
    const spaced = countWhole(hay, m.words.join(" "));
    if (spaced > 0) return spaced;
    const words = text.words;
    let n = 0;
    for (let i = 0; i + m.words.length <= words.length; i++)
      if (m.words.every((w, j) => words[i + j] === w)) n++;
    return n;
  }
  if (!cjk && !m.expansion) return countWhole(hay, needle);
  let n = 0;
  for (let i = hay.indexOf(needle); i >= 0; i = hay.indexOf(needle, i + needle.length)) {
    if (cjk) n++;
    else if (!isWordCharAt(hay, i - 1)) {
      let end = i + needle.length;
      while (isWordCharAt(hay, end)) end++;
      if (m.expansion?.has(hay.slice(i, end))) n++;
    }
  }
  return n;
}

/** How often `needle` occurs in `hay` as whole words (no word character just before or after). */
function countWhole(hay: string, needle: string): number {
  let n = 0;
  for (let i = hay.indexOf(needle); i >= 0; i = hay.indexOf(needle, i + needle.length))
    if (!isWordCharAt(hay, i - 1) && !isWordCharAt(hay, i + needle.length)) n++;
  return n;
}
