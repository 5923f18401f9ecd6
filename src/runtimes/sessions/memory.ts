import { addToTotals, type CostBaseline, type CostTotals, emptyTotals, type RunCost } from "./cost.js";
import type { AttentionMark, RunCostRecord, RuntimeSessionRecord, RuntimeSessionStore } from "./store.js";

const pair = (agent: string, key: string) => JSON.stringify([agent, key]);
/** By agent in code-unit order, as the SQLite and PostgreSQL stores sort. */
const byAgent = (a: { agent: string }, b: { agent: string }) =>
  a.agent < b.agent ? -1 : a.agent > b.agent ? 1 : 0;

/** Runtime sessions in memory, for the memory store and tests: gone when the process ends. */
export class MemoryRuntimeSessionStore implements RuntimeSessionStore {
  private readonly sessions = new Map<string, RuntimeSessionRecord>();
  private readonly baselines = new Map<string, { agent: string; key: string; baseline: CostBaseline }>();
  private readonly costs = new Map<string, RunCostRecord>();
  private readonly marks = new Map<string, AttentionMark>();
  private readonly cwds = new Map<string, string | null>();

  async get(agent: string, key: string) {
    const record = this.sessions.get(pair(agent, key));
    return record && structuredClone(record);
  }

  async save(record: RuntimeSessionRecord) {
    this.sessions.set(pair(record.agent, record.key), structuredClone(record));
  }

  async forKey(key: string) {
    return [...this.sessions.values()]
      .filter((r) => r.key === key)
      .sort(byAgent)
      .map((r) => structuredClone(r));
  }

  async clear(agent: string, key: string) {
    this.sessions.delete(pair(agent, key));
    this.baselines.delete(pair(agent, key));
  }

  async clearAgent(agent: string) {
    const keys: string[] = [];
    for (const [id, record] of this.sessions) {
      if (record.agent !== agent) continue;
      keys.push(record.key);
      this.sessions.delete(id);
      this.baselines.delete(id);
    }
    return keys.sort();
  }

  async deleteKey(key: string) {
    this.drop((r) => r.key === key);
  }

  async deleteAgent(agent: string) {
    this.drop((r) => r.agent === agent);
    this.cwds.delete(agent);
  }

  async baseline(agent: string, key: string) {
    const kept = this.baselines.get(pair(agent, key));
    return kept && structuredClone(kept.baseline);
  }

  async recordCost(record: RunCostRecord, baseline?: CostBaseline) {
    this.costs.set(JSON.stringify([record.agent, record.key, record.runId]), { ...record });
    if (baseline) {
      this.baselines.set(pair(record.agent, record.key), {
        agent: record.agent,
        key: record.key,
        baseline: structuredClone(baseline),
      });
    }
  }

  async costOf(agent: string, key: string, runId: string): Promise<RunCost | undefined> {
    const record = this.costs.get(JSON.stringify([agent, key, runId]));
    if (!record) return undefined;
    return record.usd === undefined ? { status: record.status } : { status: record.status, usd: record.usd };
  }

  async totals(filter: { key?: string; agent?: string }): Promise<CostTotals> {
    let totals = emptyTotals();
    for (const record of this.costs.values()) {
      if (filter.key !== undefined && record.key !== filter.key) continue;
      if (filter.agent !== undefined && record.agent !== filter.agent) continue;
      totals = addToTotals(totals, record);
    }
    return totals;
  }

  async setAttention(agent: string, key: string, error: string | undefined, at = Date.now()) {
    if (error === undefined) this.marks.delete(pair(agent, key));
    else this.marks.set(pair(agent, key), { agent, key, error, at });
  }

  async attention(key: string) {
    return [...this.marks.values()]
      .filter((m) => m.key === key)
      .sort(byAgent)
      .map((m) => ({ ...m }));
  }

  async attentionKeys() {
    return new Set([...this.marks.values()].map((m) => m.key));
  }

  async lastCwd(agent: string) {
    return this.cwds.get(agent);
  }

  async setLastCwd(agent: string, cwd: string | null) {
    this.cwds.set(agent, cwd);
  }

  async close() {}

  private drop(match: (r: { agent: string; key: string }) => boolean) {
    for (const map of [this.sessions, this.costs, this.marks] as Map<
      string,
      { agent: string; key: string }
    >[]) {
      for (const [id, value] of map) if (match(value)) map.delete(id);
    }
    for (const [id, value] of this.baselines) if (match(value)) this.baselines.delete(id);
  }
}
