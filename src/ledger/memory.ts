import {
  type CostLedger,
  emptyTotal,
  forgottenKey,
  groupOf,
  type LedgerEntry,
  type LedgerGroup,
  type LedgerTotal,
  totalsOf,
} from "./entry.js";
import { mergeTotals } from "./merge.js";

/** Entries kept one by one; older ones are folded into per-day sums. */
export const MEMORY_LEDGER_ENTRIES = 50_000;

/** The calls of one UTC day of one conversation, summed (what an entry becomes when folded). */
interface Folded {
  day: string;
  agent: string;
  sessionId: string;
  key: string;
  total: LedgerTotal;
}

/**
 * The ledger in memory (a memory store, incognito keys): gone at restart. Bounded: past `maxEntries` the
 * oldest entries are folded into sums per (UTC day, agent, session, key), so totals stay exact and memory
 * grows with conversations per day, not with calls; `since` then counts a folded day whole when it starts
 * on that day.
 */
export class MemoryCostLedger implements CostLedger {
  private readonly entries: LedgerEntry[] = [];
  private readonly folded = new Map<string, Folded>();

  constructor(private readonly maxEntries = MEMORY_LEDGER_ENTRIES) {}

  async record(entry: LedgerEntry): Promise<void> {
    this.entries.push({ ...entry });
    while (this.entries.length > this.maxEntries) this.fold(this.entries.shift() as LedgerEntry);
  }

  async totals(by: LedgerGroup, filter: { since?: string } = {}): Promise<LedgerTotal[]> {
    const since = filter.since;
    const recent = totalsOf(since ? this.entries.filter((e) => e.at >= since) : this.entries, by);
    const day = since?.slice(0, 10) ?? "";
    const older = [...this.folded.values()]
      .filter((f) => f.day >= day)
      .map((f) => ({ ...f.total, group: groupOf({ ...f, at: f.day }, by) }));
    return older.length === 0 ? recent : mergeTotals([...older, ...recent]);
  }

  async forgetKey(key: string, secret: string): Promise<number> {
    const hashed = forgottenKey(secret, key);
    let changed = 0;
    for (const e of this.entries) {
      if (e.key !== key) continue;
      e.key = hashed;
      changed += 1;
    }
    for (const [id, f] of [...this.folded]) {
      if (f.key !== key) continue;
      this.folded.delete(id);
      changed += f.total.calls;
      this.addFolded({ ...f, key: hashed }, f.total);
    }
    return changed;
  }

  async close(): Promise<void> {}

  private fold(entry: LedgerEntry): void {
    const [total] = totalsOf([entry], "session");
    const { agent, sessionId, key } = entry;
    this.addFolded({ day: entry.at.slice(0, 10), agent, sessionId, key }, total ?? emptyTotal(""));
  }

  private addFolded(where: Omit<Folded, "total">, total: LedgerTotal): void {
    const id = JSON.stringify([where.day, where.agent, where.sessionId, where.key]);
    const seen = this.folded.get(id);
    const [sum] = mergeTotals([{ ...total, group: id }, ...(seen ? [{ ...seen.total, group: id }] : [])]);
    this.folded.set(id, { ...where, total: sum ?? total });
  }
}
