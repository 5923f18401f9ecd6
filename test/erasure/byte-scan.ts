import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

/** A word no text holds by chance: letters only, so it is one token of every tokenizer. */
export function uniqueWord(prefix: string): string {
  const letters = [...randomBytes(24)].map((b) => String.fromCharCode(97 + (b % 26))).join("");
  return `${prefix}${letters}`;
}

/**
 * The files under `dir` (recursively, WAL and shared-memory files included) holding `word` or any
 * 8-character piece of it: an FTS5 segment stores a term after the prefix it shares with the previous
 * one, so a remnant of the word can be shorter than the word.
 */
export function filesHolding(dir: string, word: string): string[] {
  const pieces = new Set<string>();
  for (let i = 0; i + 8 <= word.length; i++) pieces.add(word.slice(i, i + 8));
  const needles = [...pieces].map((piece) => Buffer.from(piece, "utf8"));
  const found: string[] = [];
  const walk = (at: string): void => {
    for (const name of readdirSync(at)) {
      const path = join(at, name);
      if (statSync(path).isDirectory()) walk(path);
      else {
        const bytes = readFileSync(path);
        if (needles.some((needle) => bytes.includes(needle))) found.push(path);
      }
    }
  };
  walk(dir);
  return found;
}
