import { isIdentifier } from "../compaction/summarizers/offline.js";
import { STOP_WORDS } from "../compaction/summarizers/text.js";
import type { TextModel } from "../model/text-model.js";

/** CrabTalk: a title from the first exchange, each message cut to 200 characters. */
const SOURCE_CHARS = 200;
const MIN_WORDS = 3;
const MAX_WORDS = 6;
const FALLBACK_TITLE = "New conversation";

export interface FirstExchange {
  user: string;
  assistant: string;
}

export const TITLE_SYSTEM_PROMPT = [
  "You name conversations. Reply with a title of 3 to 6 words saying what the conversation is about.",
  "Reply with the title only: no quotes, no label, no punctuation at the start or end.",
  "Write it in the language the user writes in.",
].join("\n");

const EDGE_PUNCTUATION = /^[\s"'`*_#.,;:!?«»“”‘’()[\]{}<>~-]+|[\s"'`*_#.,;:!?«»“”‘’()[\]{}<>~-]+$/g;
const WORD_EDGES = /^[^\p{L}\p{N}@#$/~.]+|[^\p{L}\p{N}%]+$/gu;

/** Makes a model's answer a bare 3–6 word title, or returns undefined when nothing usable is left. */
export function sanitizeTitle(answer: string): string | undefined {
  const line = answer
    .split("\n")
    .map((l) => l.trim())
    .find((l) => l.length > 0);
  if (!line) return undefined;
  const text = line
    .replace(/^(?:\*\*|__)?title(?:\*\*|__)?\s*:\s*/i, "")
    .replace(/["“”«»`]/g, "")
    .replace(EDGE_PUNCTUATION, "")
    .replace(/\s+/g, " ");
  const words = text.split(" ").filter((w) => w.length > 0);
  if (words.length < MIN_WORDS) return undefined;
  const title = words.slice(0, MAX_WORDS).join(" ").replace(EDGE_PUNCTUATION, "");
  return title.split(" ").length >= MIN_WORDS ? title : undefined;
}

interface Candidate {
  word: string;
  original: string;
  position: number;
  weight: number;
}

function candidates(text: string, offset: number): Candidate[] {
  const out: Candidate[] = [];
  const seen = new Set<string>();
  let sentenceStart = true;
  let position = 0;
  for (const raw of text.split(/\s+/)) {
    if (!raw) continue;
    const endsSentence = /[.!?]["')\]]*$/.test(raw);
    const word = raw.replace(WORD_EDGES, "");
    const atStart = sentenceStart;
    sentenceStart = endsSentence;
    position++;
    if (!word || word.length > 40) continue;
    const lower = word.toLowerCase();
    if (STOP_WORDS.has(lower) || seen.has(lower) || !/[\p{L}\p{N}]/u.test(word)) continue;
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(word) || word.includes("@")) continue;
    seen.add(lower);
    const identifier = isIdentifier(word);
    // Capitalised mid-sentence, or mixed/upper case anywhere: a name worth keeping as written.
    const proper = /\p{Lu}/u.test(word.slice(1)) || (!atStart && /^\p{Lu}/u.test(word));
    const kept = identifier || proper ? word : atStart ? word.charAt(0).toLowerCase() + word.slice(1) : word;
    const weight = identifier || proper ? 3 : word.length >= 7 ? 2 : 1;
    out.push({ word: kept, original: word, position: offset + position, weight });
  }
  return out;
}

/** The 3–6 most informative words of the user message, in their order; never empty. */
export function offlineTitle(exchange: FirstExchange): string {
  const user = exchange.user.slice(0, SOURCE_CHARS);
  const assistant = exchange.assistant.slice(0, SOURCE_CHARS);
  let words = candidates(user, 0);
  if (words.length < MIN_WORDS) {
    const known = new Set(words.map((w) => w.word.toLowerCase()));
    const extra = candidates(assistant, 1_000).filter((w) => !known.has(w.word.toLowerCase()));
    words = [...words, ...extra.sort((a, b) => b.weight - a.weight || a.position - b.position)].slice(
      0,
      MIN_WORDS,
    );
  }
  const picked = [...words]
    .sort((a, b) => b.weight - a.weight || a.position - b.position)
    .slice(0, MAX_WORDS)
    .sort((a, b) => a.position - b.position);
  if (picked.length === 0) return FALLBACK_TITLE;
  // Too few words for a title: "Chat about …", with the words as written (a lone word is often a name).
  if (picked.length < MIN_WORDS) return ["Chat", "about", ...picked.map((c) => c.original)].join(" ");
  const chosen = picked.map((c) => c.word);
  const first = chosen[0]!;
  if (/^\p{Ll}/u.test(first) && !isIdentifier(first)) {
    chosen[0] = first.charAt(0).toUpperCase() + first.slice(1);
  }
  return chosen.join(" ");
}

/**
 * A 3–6 word title for a session from its first exchange. With a model, the model's answer is
 * sanitised; an unusable answer or a failed call falls back to the offline title. Rejects only when
 * `signal` is aborted.
 */
export async function titleFromExchange(
  exchange: FirstExchange,
  model?: TextModel,
  signal?: AbortSignal,
): Promise<string> {
  signal?.throwIfAborted();
  if (!model) return offlineTitle(exchange);
  const user = exchange.user.slice(0, SOURCE_CHARS);
  const assistant = exchange.assistant.slice(0, SOURCE_CHARS);
  try {
    const completion = await model.complete({
      system: TITLE_SYSTEM_PROMPT,
      user: `User: ${user}\nAssistant: ${assistant}\n\nTitle (3 to 6 words):`,
      maxTokens: 24,
      temperature: 0.2,
      ...(signal ? { signal } : {}),
    });
    const title = sanitizeTitle(completion.text);
    if (title) return title;
  } catch (error) {
    if (signal?.aborted) throw error;
  }
  return offlineTitle(exchange);
}
