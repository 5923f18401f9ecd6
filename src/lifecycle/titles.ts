import { isIdentifier } from "../compaction/summarizers/offline.js";
import { STOP_WORDS } from "../compaction/summarizers/text.js";
import { ECHO_LABEL } from "../model/runtime.js";
import type { TextModel } from "../model/text-model.js";
import { redactSecrets } from "../secrets/index.js";

/** CrabTalk: a title from the first exchange, each message cut to 200 characters. */
const SOURCE_CHARS = 200;
const MIN_WORDS = 3;
const MAX_WORDS = 6;
/** When neither side said a usable word: still 3 real words, never the key. */
export const FALLBACK_TITLE = "Conversation without a topic";

export interface FirstExchange {
  user: string;
  assistant: string;
  /** The session key: never part of a title. */
  key?: string;
}

export const TITLE_SYSTEM_PROMPT = [
  "You name conversations. Reply with a title of 3 to 6 words saying what the conversation is about.",
  "Reply with the title only: no quotes, no label, no punctuation at the start or end.",
  "Write it in the language the user writes in.",
].join("\n");

const EDGE_PUNCTUATION = /^[\s"'`*_#.,;:!?«»“”‘’()[\]{}<>~-]+|[\s"'`*_#.,;:!?«»“”‘’()[\]{}<>~-]+$/g;
const WORD_EDGES = /^[^\p{L}\p{N}@#$/~.]+|[^\p{L}\p{N}%]+$/gu;
/** A real word: letters and digits, with `'`, `.`, `+`, `#`, `&` or `-` inside (`Node.js`, `C++`, `e-mail`). */
const REAL_WORD = /^[\p{L}\p{N}](?:[\p{L}\p{N}'’.+#&-]*[\p{L}\p{N}+#])?$/u;
/** Quotes, brackets and `=` split JSON and markup into its words (`{"hello":"world"}` → hello, world). */
const TOKEN_SPLIT = /[\s"“”{}[\]<>=|`]+/;

/** Long mixes of letters and digits are ids or credentials, not words anyone would title a chat with. */
function secretShaped(word: string): boolean {
  return word.length >= 16 && /\p{L}/u.test(word) && /\p{N}/u.test(word);
}

/** What the agent said, without runtime boilerplate: the echo runtime only repeats the input and the key. */
function agentWords(assistant: string): string {
  return assistant.startsWith(ECHO_LABEL) ? "" : assistant;
}

/** Whether a title is fit to show: no key, no echo boilerplate, no secret. */
function acceptable(title: string, key: string | undefined): boolean {
  if (key && title.toLowerCase().includes(key.toLowerCase())) return false;
  if (title.includes(ECHO_LABEL) || /\becho runtime\b/i.test(title)) return false;
  return redactSecrets(title) === title && !title.split(" ").some(secretShaped);
}

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

function candidates(text: string, offset: number, key: string | undefined): Candidate[] {
  const out: Candidate[] = [];
  const seen = new Set<string>();
  const keyLower = key?.toLowerCase();
  let sentenceStart = true;
  let position = 0;
  for (const raw of redactSecrets(text).split(TOKEN_SPLIT)) {
    if (!raw) continue;
    const endsSentence = /[.!?]["')\]]*$/.test(raw);
    const word = raw.replace(WORD_EDGES, "");
    const atStart = sentenceStart;
    sentenceStart = endsSentence;
    position++;
    if (!word || word.length > 40 || secretShaped(word)) continue;
    // A file path is as telling as a word; other identifiers with `:` or `@` are keys and addresses.
    const path = isIdentifier(word) && word.includes("/") && !/[:@]/.test(word);
    if (!REAL_WORD.test(word) && !path) continue;
    const lower = word.toLowerCase();
    if (STOP_WORDS.has(lower) || seen.has(lower) || lower === keyLower || lower === "redacted") continue;
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

/**
 * The 3–6 most informative real words of the user message, in their order, borrowing from the agent's
 * reply (never runtime boilerplate) when the user said too little; never empty, never the key.
 */
export function offlineTitle(exchange: FirstExchange): string {
  // Scrubbed whole, then cut: a secret cut in two is no longer told by its shape.
  const user = redactSecrets(exchange.user).slice(0, SOURCE_CHARS);
  const assistant = redactSecrets(agentWords(exchange.assistant)).slice(0, SOURCE_CHARS);
  let words = candidates(user, 0, exchange.key);
  if (words.length < MIN_WORDS) {
    const known = new Set(words.map((w) => w.word.toLowerCase()));
    const extra = candidates(assistant, 1_000, exchange.key).filter((w) => !known.has(w.word.toLowerCase()));
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
  const user = redactSecrets(exchange.user).slice(0, SOURCE_CHARS);
  const assistant = redactSecrets(agentWords(exchange.assistant)).slice(0, SOURCE_CHARS);
  try {
    const completion = await model.complete({
      system: TITLE_SYSTEM_PROMPT,
      user: `User: ${user}\nAssistant: ${assistant}\n\nTitle (3 to 6 words):`,
      maxTokens: 24,
      temperature: 0.2,
      ...(signal ? { signal } : {}),
    });
    const title = sanitizeTitle(completion.text);
    if (title && acceptable(title, exchange.key)) return title;
  } catch (error) {
    if (signal?.aborted) throw error;
  }
  return offlineTitle(exchange);
}
