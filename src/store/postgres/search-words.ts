import type { Entry } from "../../model/entry.js";
import { CJK, indexedText } from "../../search/indexed-text.js";
import type { SearchTerm } from "../../search/query.js";
import { foldedWords } from "../../search/rank.js";

/**
 * An entry's search columns (migration 4), computed here rather than by the server: its words as a
 * `tsvector` literal (folded and split as every store's word index is: `foldedWords`, unicode61 with
 * diacritics removed), with their positions for phrases and `ts_rank_cd`; and its text again when it has
 * CJK, for the trigram index. Both null for an entry that is not indexed (indexed-text.ts).
 *
 * The words are letters, digits and private-use characters only, so a lexeme never needs quoting inside
 * its quotes. PostgreSQL's limits are kept here, as `to_tsvector` keeps them: a word of more than 2,047
 * bytes is left out, positions stop at 16,383 and at 256 per word, and one text's words and positions at
 * 1,000,000 bytes as the server counts them (its limit is 1 MiB; the rest of a longer text is not indexed).
 */
export interface SearchColumns {
  words: string | null;
  cjk: string | null;
}

const MAX_WORD_BYTES = 2047;
const MAX_POSITION = 16_383;
const MAX_POSITIONS = 256;
const MAX_VECTOR_BYTES = 1_000_000;

const NOT_INDEXED: SearchColumns = { words: null, cjk: null };

export function searchColumns(entry: Entry): SearchColumns {
  const indexed = indexedText(entry);
  if (!indexed) return NOT_INDEXED;
  return { words: tsvectorOf(indexed.text), cjk: CJK.test(indexed.text) ? indexed.text : null };
}

/** The text's words as a tsvector literal: `'word':1,4 'other':2`. */
export function tsvectorOf(text: string): string {
  // Each word's positions as the literal writes them ("1,4"), and how many once there are several.
  const positions = new Map<string, string>();
  const counts = new Map<string, number>();
  let bytes = 0;
  let position = 0;
  for (const word of foldedWords(text)) {
    if (position < MAX_POSITION) position++;
    const seen = positions.get(word);
    if (seen !== undefined) {
      const count = counts.get(word) ?? 1;
      // Only a position held at the last one can repeat.
      const repeated = position === MAX_POSITION && seen.endsWith(String(MAX_POSITION));
      if (count < MAX_POSITIONS && !repeated) {
        if (bytes + 2 > MAX_VECTOR_BYTES) continue;
        positions.set(word, `${seen},${position}`);
        counts.set(word, count + 1);
        bytes += 2;
      }
      continue;
    }
    // A UTF-16 unit is at most 3 UTF-8 bytes: only a long word needs counting.
    const length = word.length * 3 > MAX_WORD_BYTES ? Buffer.byteLength(word) : word.length;
    // As the server counts a tsvector: the word (2-aligned), its count of positions and one position.
    const size = length + (length % 2) + 4;
    if (length > MAX_WORD_BYTES || bytes + size > MAX_VECTOR_BYTES) continue;
    bytes += size;
    positions.set(word, String(position));
  }
  let literal = "";
  for (const [word, at] of positions) literal += literal === "" ? `'${word}':${at}` : ` '${word}':${at}`;
  return literal;
}

/**
 * The words part of a search as a tsquery literal, folded and split as the entries' words are: each term's
 * words in a row (`<->`), the last word typed (not in quotes) as a prefix, terms joined by `&`. Undefined
 * when no term has words to match (every term CJK, matched by the trigram index instead).
 */
export function tsqueryOf(terms: readonly SearchTerm[]): string | undefined {
  const parts: string[] = [];
  terms.forEach((term, i) => {
    if (CJK.test(term.text)) return;
    const words = foldedWords(term.text).map((w) => `'${w}'`);
    if (words.length === 0) return;
    if (!term.phrase && i === terms.length - 1) words[words.length - 1] += ":*";
    parts.push(words.length === 1 ? words[0]! : `(${words.join(" <-> ")})`);
  });
  return parts.length === 0 ? undefined : parts.join(" & ");
}
