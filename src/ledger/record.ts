import { type CallContext, callEntry } from "./call-entry.js";
import type { CostLedger } from "./entry.js";
import type { ModelPrice } from "./price.js";
import type { ReportedUsage, UsageShape } from "./usage.js";

/**
 * Records one model call. A ledger that cannot write (a full disk, a lost database) does not fail the
 * turn, title or compaction the call was for: the call is answered, its entry is lost, and `onError`
 * hears of it.
 */
export async function recordCall(
  ledger: CostLedger | undefined,
  context: CallContext,
  shape: UsageShape,
  usage: ReportedUsage | undefined,
  price: ModelPrice | undefined,
  onError: (error: unknown) => void = () => {},
): Promise<void> {
  if (!ledger) return;
  try {
    await ledger.record(callEntry(context, shape, usage, price));
  } catch (error) {
    onError(error);
  }
}

/** Only the usage fields of a runtime event or a completion (what the ledger keeps of it). */
export function usageOf(from: ReportedUsage): ReportedUsage {
  const usage: ReportedUsage = {};
  for (const name of [
    "inputTokens",
    "outputTokens",
    "cacheReadTokens",
    "cacheWriteTokens",
    "reportedUsd",
  ] as const) {
    const value = from[name];
    if (typeof value === "number") usage[name] = value;
  }
  return usage;
}
