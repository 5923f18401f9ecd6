import { extractIdentifiers } from "./summarizers/offline.js";

/** Plain numbers matter less than ids, URLs and paths when only some can be required. */
function weight(identifier: string): number {
  if (/^[\d.,$%]+$/.test(identifier)) return 1;
  return 2;
}

/**
 * The identifiers a summary must keep verbatim: the most specific and most repeated ones in the text,
 * at most `max`, together short enough (half the summary limit) that a summary can hold them.
 */
export function requiredIdentifiers(text: string, max: number, summaryMaxChars: number): string[] {
  const found = extractIdentifiers(text);
  const counts = new Map<string, number>();
  for (const id of found) counts.set(id, (counts.get(id) ?? 0) + text.split(id).length - 1);
  const ranked = [...found].sort(
    (a, b) =>
      weight(b) - weight(a) ||
      (counts.get(b) ?? 0) - (counts.get(a) ?? 0) ||
      found.indexOf(a) - found.indexOf(b),
  );
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
