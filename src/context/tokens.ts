import { estimateTokens } from "../model/entry.js";
import { optionalPackage } from "../model/optional-package.js";
import type { ChatMessage } from "./chat-message.js";

export { estimateTokens };

export type TokenEncoding = "o200k_base" | "cl100k_base";

/** An exact token counter for one encoding; sync once loaded. */
export interface TokenCounter {
  readonly encoding: TokenEncoding;
  count(text: string): number;
}

/** Per message: `<|im_start|>`, the role, the separator and `<|im_end|>` (OpenAI's chat format). */
const TOKENS_PER_MESSAGE = 4;
/** The `<|im_start|>assistant<|im_sep|>` that primes the reply. */
const REPLY_PRIMING_TOKENS = 3;

// Special-token strings in user text are counted as plain text instead of throwing.
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

// Literal specifiers so bundlers and tsc resolve them; each module costs ~360 ms to load.
const encoders = {
  cl100k_base: optionalPackage("gpt-tokenizer", () => import("gpt-tokenizer/encoding/cl100k_base")),
  o200k_base: optionalPackage("gpt-tokenizer", () => import("gpt-tokenizer/encoding/o200k_base")),
};

const counters = new Map<TokenEncoding, Promise<TokenCounter>>();
let loads = 0;

/**
 * The encoding a model uses: cl100k_base for gpt-4 (not 4o/4.1/4.5), gpt-3.5 and the text-embedding
 * models; o200k_base for everything else, unknown models included. A provider prefix (`openai/`) and a
 * fine-tune prefix (`ft:`) are ignored.
 */
export function encodingForModel(model?: string): TokenEncoding {
  if (model === undefined) return "o200k_base";
  const name = (model.split("/").pop() ?? "").toLowerCase().replace(/^ft:/, "");
  if (/^gpt-4(?:-|$)/.test(name) || name.startsWith("gpt-3.5") || name.startsWith("gpt-35")) {
    return "cl100k_base";
  }
  if (name.startsWith("text-embedding-3") || name.startsWith("text-embedding-ada-002")) return "cl100k_base";
  return "o200k_base";
}

async function importCounter(encoding: TokenEncoding): Promise<TokenCounter> {
  loads += 1;
  const api = await encoders[encoding]();
  return { encoding, count: (text) => api.countTokens(text, PLAIN_TEXT) };
}

/** Loads (once per encoding, on first use) the exact counter for a model; later calls get the same one. */
export function loadTokenCounter(model?: string): Promise<TokenCounter> {
  const encoding = encodingForModel(model);
  let counter = counters.get(encoding);
  if (counter === undefined) {
    counter = importCounter(encoding);
    // A failed import is not cached, so the next call tries again.
    counter.catch(() => counters.delete(encoding));
    counters.set(encoding, counter);
  }
  return counter;
}

/** How many times an encoder module has been imported in this process (for tests of lazy loading). */
export function tokenizerLoads(): number {
  return loads;
}

export async function countTokens(text: string, model?: string): Promise<number> {
  return (await loadTokenCounter(model)).count(text);
}

/** Exact tokens of a chat prompt, counted the way OpenAI's chat format frames messages. */
export async function countMessagesTokens(messages: readonly ChatMessage[], model?: string): Promise<number> {
  const counter = await loadTokenCounter(model);
  let total = REPLY_PRIMING_TOKENS;
  for (const message of messages) total += TOKENS_PER_MESSAGE + counter.count(message.content);
  return total;
}

/** Cheap estimate of a chat prompt: Σ (bytes / 4, rounded up) + 4 per message. */
export function estimateMessagesTokens(messages: readonly ChatMessage[]): number {
  let total = 0;
  for (const message of messages) total += TOKENS_PER_MESSAGE + estimateTokens(message.content);
  return total;
}
