import { createHmac } from "node:crypto";
import type { CallPrice } from "./price.js";
import type { ReportedUsage } from "./usage.js";

/** What a model call was for. */
export type CallKind = "turn" | "tool_round" | "compaction" | "title" | "summary";

/**
 * One model call. No message text: only who (agent, session id, key), what (model, kind), the tokens as the
 * provider reported them, and the price with its source. `usd` null: the price is unknown.
 */
export interface LedgerEntry extends ReportedUsage, CallPrice {
  at: string;
  agent: string;
  sessionId: string;
  key: string;
  model: string;
  kind: CallKind;
}

export type LedgerGroup = "session" | "agent" | "day";

export interface LedgerTotal {
  /** The session id, the agent, or the UTC day (YYYY-MM-DD). */
  group: string;
  calls: number;
  /** Sum of the known prices; null when no call of the group has a known price. */
  usd: number | null;
  /** Calls whose price is unknown: when > 0, `usd` is a lower bound. */
  unpricedCalls: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
}

export function groupOf(entry: Pick<LedgerEntry, "agent" | "at" | "sessionId">, by: LedgerGroup): string {
  if (by === "agent") return entry.agent;
  if (by === "day") return entry.at.slice(0, 10);
  return entry.sessionId;
}

/** Totals of entries by group, sorted by group. Pure: every store sums the same way. */
export function totalsOf(entries: Iterable<LedgerEntry>, by: LedgerGroup): LedgerTotal[] {
  const groups = new Map<string, LedgerTotal>();
  for (const e of entries) {
    const name = groupOf(e, by);
    const t = groups.get(name) ?? emptyTotal(name);
    t.calls += 1;
    if (e.usd === null) t.unpricedCalls += 1;
    else t.usd = Math.round(((t.usd ?? 0) + e.usd) * 1e9) / 1e9;
    t.inputTokens += e.inputTokens ?? 0;
    t.outputTokens += e.outputTokens ?? 0;
    t.cacheReadTokens += e.cacheReadTokens ?? 0;
    t.cacheWriteTokens += e.cacheWriteTokens ?? 0;
    groups.set(name, t);
  }
  return [...groups.values()].sort((a, b) => (a.group < b.group ? -1 : a.group > b.group ? 1 : 0));
}

/** A group with no call yet: `usd` null (nothing known), every count 0. */
export function emptyTotal(group: string): LedgerTotal {
  return {
    group,
    calls: 0,
    usd: null,
    unpricedCalls: 0,
    inputTokens: 0,
    outputTokens: 0,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
  };
}

/**
 * What a forgotten key becomes in the ledger: a keyed hash, so the totals stay grouped per conversation
 * but the key (which may name a person: a phone number, a user id) is gone and cannot be recomputed
 * without the secret.
 */
export function forgottenKey(secret: string, key: string): string {
  return `forgotten:${createHmac("sha256", secret).update(key).digest("hex").slice(0, 32)}`;
}

/** The ledger: append-only except that forgetting a key rewrites it to its keyed hash. */
export interface CostLedger {
  record(entry: LedgerEntry): Promise<void>;
  totals(by: LedgerGroup, filter?: { since?: string }): Promise<LedgerTotal[]>;
  /** Replaces `key` by `forgottenKey(secret, key)` in every entry; returns how many entries changed. */
  forgetKey(key: string, secret: string): Promise<number>;
  close(): Promise<void>;
}
