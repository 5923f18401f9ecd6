import type { CostLedger, LedgerEntry, LedgerGroup, LedgerTotal } from "../ledger/entry.js";
import { MemoryCostLedger } from "../ledger/memory.js";
import { mergeTotals } from "../ledger/merge.js";
import type { IncognitoKeys } from "./keys.js";

/**
 * The cost ledger with an incognito key's calls in memory (gone at restart, as its session is): nothing of
 * an incognito conversation reaches the stored ledger. Totals count both.
 */
export class IncognitoLedger implements CostLedger {
  private readonly memory = new MemoryCostLedger();

  constructor(
    private readonly stored: CostLedger,
    private readonly keys: IncognitoKeys,
  ) {}

  record(entry: LedgerEntry): Promise<void> {
    return (this.keys.has(entry.key) ? this.memory : this.stored).record(entry);
  }

  async totals(by: LedgerGroup, filter?: { since?: string }): Promise<LedgerTotal[]> {
    const [stored, incognito] = await Promise.all([
      this.stored.totals(by, filter),
      this.memory.totals(by, filter),
    ]);
    return mergeTotals([...stored, ...incognito]);
  }

  async forgetKey(key: string, secret: string): Promise<number> {
    const [a, b] = await Promise.all([
      this.stored.forgetKey(key, secret),
      this.memory.forgetKey(key, secret),
    ]);
    return a + b;
  }

  async close(): Promise<void> {
    await this.stored.close();
  }
}
