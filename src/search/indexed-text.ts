import type { Entry } from "../model/entry.js";
import type { SearchRole } from "./query.js";

/**
 * What a store indexes of an entry: the text of a user or assistant message, as stored (redacted before it
 * was stored). Tool output, notes, summaries and auto-injected context (never stored anyway) are not.
 */
export function indexedText(entry: Entry): { role: SearchRole; text: string } | undefined {
  if (entry.type !== "message" || entry.autoInjected) return undefined;
  if (entry.role !== "user" && entry.role !== "assistant") return undefined;
  return entry.content.trim() === "" ? undefined : { role: entry.role, text: entry.content };
}

/** Han, kana, Hangul: scripts written without spaces, found through the trigram index. */
export const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;
