import type { ReportedUsage } from "./usage.js";

/** USD per million tokens, as configured under `models.<name>.price`. */
export interface ModelPrice {
  input: number;
  output: number;
  /** Cache reads; absent: priced as input. */
  cacheRead?: number;
  /** Cache writes; absent: priced as input. */
  cacheWrite?: number;
}

/** A call's price: `usd` null means unknown (never 0), `source` says where a known figure came from. */
export interface CallPrice {
  usd: number | null;
  source: "provider" | "config" | null;
}

const MILLION = 1_000_000;
const SCALE = 1e9;

/**
 * The price of one call: the provider's own figure first; else the configured price applied to every token
 * count the provider reported. OpenAI's `prompt_tokens` include the cached ones, Anthropic's `input_tokens`
 * exclude them: `inputIncludesCache` says which.
 */
export function priceCall(
  usage: ReportedUsage | undefined,
  price: ModelPrice | undefined,
  inputIncludesCache: boolean,
): CallPrice {
  if (usage?.reportedUsd !== undefined) return { usd: round(usage.reportedUsd), source: "provider" };
  if (!usage || !price || usage.inputTokens === undefined || usage.outputTokens === undefined) {
    return { usd: null, source: null };
  }
  const read = usage.cacheReadTokens ?? 0;
  const write = usage.cacheWriteTokens ?? 0;
  const fresh = inputIncludesCache ? Math.max(0, usage.inputTokens - read - write) : usage.inputTokens;
  const usd =
    (fresh * price.input +
      usage.outputTokens * price.output +
      read * (price.cacheRead ?? price.input) +
      write * (price.cacheWrite ?? price.input)) /
    MILLION;
  return { usd: round(usd), source: "config" };
}

function round(usd: number): number {
  return Math.round(usd * SCALE) / SCALE;
}
