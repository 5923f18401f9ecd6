import {
  type CostLedger,
  forgottenKey,
  type LedgerEntry,
  type LedgerGroup,
  type LedgerTotal,
  totalsOf,
} from "./entry.js";

/** The ledger in memory (tests, incognito-only deployments): bounded by the caller's lifetime. */
export class MemoryCostLedger implements CostLedger {
  private readonly entries: LedgerEntry[] = [];

  async record(entry: LedgerEntry): Promise<void> {
    this.entries.push({ ...entry });
  }

  async totals(by: LedgerGroup, filter: { since?: string } = {}): Promise<LedgerTotal[]> {
    const since = filter.since;
    return totalsOf(since ? this.entries.filter((e) => e.at >= since) : this.entries, by);
  }

  async forgetKey(key: string, secret: string): Promise<number> {
    let changed = 0;
    for (const e of this.entries) {
      if (e.key !== key) continue;
      e.key = forgottenKey(secret, key);
      changed += 1;
    }
    return changed;
  }

  async close(): Promise<void> {}
}
