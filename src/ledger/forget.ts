import type { CostLedger } from "./entry.js";

/**
 * Erasure's part in the ledger: each key (a conversation of the erased person) is replaced by its keyed hash
 * in every entry (`forgottenKey`), so the totals stay, grouped as before, and the key is gone. Returns the
 * entries changed. The ledger holds no message text, so nothing else of the person is in it.
 */
export async function forgetLedgerKeys(
  ledger: CostLedger,
  keys: Iterable<string>,
  secret: string,
): Promise<number> {
  let changed = 0;
  for (const key of new Set(keys)) changed += await ledger.forgetKey(key, secret);
  return changed;
}
