import type { CallKind, LedgerEntry } from "./entry.js";
import { type ModelPrice, priceCall } from "./price.js";
import type { ReportedUsage, UsageShape } from "./usage.js";

export interface CallContext {
  agent: string;
  sessionId: string;
  key: string;
  kind: CallKind;
  /** The model that answered (the provider's name for it when it gave one). */
  model: string;
  /** ISO time; default now. */
  at?: string;
}

/**
 * The ledger entry of one model call: the usage as reported (no text), priced by the provider's own figure,
 * else by the configured price, else unknown (null).
 */
export function callEntry(
  context: CallContext,
  shape: UsageShape,
  usage: ReportedUsage | undefined,
  price: ModelPrice | undefined,
): LedgerEntry {
  const reported = Object.fromEntries(Object.entries(usage ?? {}).filter(([, v]) => v !== undefined));
  return {
    at: context.at ?? new Date().toISOString(),
    agent: context.agent,
    sessionId: context.sessionId,
    key: context.key,
    model: context.model,
    kind: context.kind,
    ...(reported as ReportedUsage),
    // OpenAI's prompt_tokens count the cached ones; Anthropic's input_tokens do not.
    ...priceCall(usage, price, shape === "openai"),
  };
}
