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

/** What one term matches in a message's folded words: a word, a phrase, a prefix's words or CJK text. */
export interface TermMatcher {
  term: SearchTerm;
  /** For the last word typed: the indexed words it is a prefix of (itself included when indexed). */
  expansion?: ReadonlySet<string>;
}

/**
 * How often a term occurs in a message (`words` its folded words, `folded` its folded text): a word as a
 * whole word, a prefix as any of its expansion's words, a phrase as consecutive words, CJK as a substring.
 */
export function occurrences(m: TermMatcher, words: readonly string[], folded: string): number {
  if (CJK.test(m.term.text)) {
    const needle = fold(m.term.text);
    let n = 0;
    for (let i = folded.indexOf(needle); i >= 0; i = folded.indexOf(needle, i + needle.length)) n++;
    return n;
  }
  const wanted = foldedWords(m.term.text);
  if (wanted.length === 0) return 0;
  let n = 0;
  for (let i = 0; i + wanted.length <= words.length; i++) {
    if (m.expansion) {
      if (m.expansion.has(words[i] ?? "")) n++;
    } else if (wanted.every((w, j) => words[i + j] === w)) n++;
  }
  return n;
}
