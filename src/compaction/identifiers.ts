import { extractIdentifiers } from "./summarizers/offline.js";

/** Plain numbers matter less than ids, URLs and paths when only some can be required. */
function weight(identifier: string): number {
  if (/^[\d.,$%]+$/.test(identifier)) return 1;
  return 2;
}

/** Non-overlapping occurrences of `needle` in `text`, without splitting it into pieces. */
function occurrences(text: string, needle: string): number {
  let n = 0;
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length)) n++;
  return n;
}

/**
 * The identifiers a summary must keep verbatim: the most specific and most repeated ones in the text,
 * at most `max`, together short enough (half the summary limit) that a summary can hold them.
 */
export function requiredIdentifiers(text: string, max: number, summaryMaxChars: number): string[] {
  const found = extractIdentifiers(text);
  const ranked = found
    .map((id, order) => ({ id, order, weight: weight(id), count: occurrences(text, id) }))
    .sort((a, b) => b.weight - a.weight || b.count - a.count || a.order - b.order)
    .map((r) => r.id);
  const chosen: string[] = [];
  let length = 0;
  for (const id of ranked) {
    if (chosen.length >= max) break;
    if (length + id.length + 2 > summaryMaxChars / 2) continue;
    chosen.push(id);
    length += id.length + 2;
  }
  return chosen;
}
