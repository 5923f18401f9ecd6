import type { Entry } from "../model/entry.js";
import { entryText, estimateTokens } from "../model/entry.js";
import type { StoredContext } from "../model/session.js";
import type { CompactionPolicy } from "./policy.js";

export type CompactionReason = "messages" | "tokens" | "window" | "manual";

export interface ContextSize {
  /** Non-system messages in the context. */
  messages: number;
  /** Estimated tokens of the summary and the kept entries. */
  tokens: number;
}

/** Token estimates of entries that cannot change (the store's frozen copies): each is measured once. */
const estimates = new WeakMap<Entry, number>();

function tokensOf(entry: Entry): number {
  const known = estimates.get(entry);
  if (known !== undefined) return known;
  const tokens = estimateTokens(entryText(entry));
  if (Object.isFrozen(entry)) estimates.set(entry, tokens);
  return tokens;
}

export function measureContext(context: Pick<StoredContext, "summary" | "entries">): ContextSize {
  let messages = 0;
  let tokens = context.summary ? tokensOf(context.summary) : 0;
  for (const entry of context.entries) {
    if (entry.type !== "message") continue;
    if (entry.role !== "system") messages++;
    tokens += tokensOf(entry);
  }
  return { messages, tokens };
}

/** Which threshold the context has passed, if any. */
export function dueReason(
  size: ContextSize,
  policy: CompactionPolicy,
  contextWindow?: number,
): CompactionReason | undefined {
  if (!policy.enabled) return undefined;
  if (size.messages > policy.maxMessages) return "messages";
  if (size.tokens > policy.maxTokens) return "tokens";
  if (contextWindow !== undefined && size.tokens > contextWindow * policy.windowFraction) return "window";
  return undefined;
}

export function isMessage(entry: Entry): entry is Extract<Entry, { type: "message" }> {
  return entry.type === "message";
}
