import { roundUsd } from "../runtimes/sessions/cost.js";
import { MemoryRuntimeSessionStore } from "../runtimes/sessions/memory.js";
import type { RunCostRecord, RuntimeSessionRecord, RuntimeSessionStore } from "../runtimes/sessions/store.js";
import type { IncognitoKeys } from "./keys.js";

/**
 * Runtime sessions, costs and needs-attention marks: an incognito key's in memory (gone at restart, as its
 * session is), every other key's in `stored`. What spans keys (an agent's totals, cleared agents) merges.
 */
export class IncognitoRuntimeSessions implements RuntimeSessionStore {
  private readonly memory = new MemoryRuntimeSessionStore();

  constructor(
    private readonly stored: RuntimeSessionStore,
    private readonly keys: IncognitoKeys,
  ) {}

  get(agent: string, key: string) {
    return this.of(key).get(agent, key);
  }

  save(record: RuntimeSessionRecord) {
    return this.of(record.key).save(record);
  }

  forKey(key: string) {
    return this.of(key).forKey(key);
  }

  clear(agent: string, key: string) {
    return this.of(key).clear(agent, key);
  }

  async clearAgent(agent: string) {
    const [stored, incognito] = await Promise.all([
      this.stored.clearAgent(agent),
      this.memory.clearAgent(agent),
    ]);
    return [...stored, ...incognito].sort();
  }

  async deleteKey(key: string) {
    // Both: a key made incognito after a rule changed may have left records in the stored one.
    await Promise.all([this.stored.deleteKey(key), this.memory.deleteKey(key)]);
  }

  async deleteAgent(agent: string) {
    await Promise.all([this.stored.deleteAgent(agent), this.memory.deleteAgent(agent)]);
  }

  baseline(agent: string, key: string) {
    return this.of(key).baseline(agent, key);
  }

  recordCost(record: RunCostRecord, baseline?: Parameters<RuntimeSessionStore["recordCost"]>[1]) {
    return this.of(record.key).recordCost(record, baseline);
  }

  costOf(agent: string, key: string, runId: string) {
    return this.of(key).costOf(agent, key, runId);
  }

  async totals(filter: { key?: string; agent?: string }) {
    if (filter.key !== undefined) return this.of(filter.key).totals(filter);
    const [a, b] = await Promise.all([this.stored.totals(filter), this.memory.totals(filter)]);
    return {
      usd: roundUsd(a.usd + b.usd),
      pricedRuns: a.pricedRuns + b.pricedRuns,
      unpricedRuns: a.unpricedRuns + b.unpricedRuns,
      ambiguousRuns: a.ambiguousRuns + b.ambiguousRuns,
      notMeasuredRuns: a.notMeasuredRuns + b.notMeasuredRuns,
    };
  }

  setAttention(agent: string, key: string, error: string | undefined, at?: number) {
    return this.of(key).setAttention(agent, key, error, at);
  }

  attention(key: string) {
    return this.of(key).attention(key);
  }

  async attentionKeys() {
    const [stored, incognito] = await Promise.all([this.stored.attentionKeys(), this.memory.attentionKeys()]);
    for (const key of incognito) stored.add(key);
    return stored;
  }

  lastCwd(agent: string) {
    return this.stored.lastCwd(agent);
  }

  setLastCwd(agent: string, cwd: string | null) {
    return this.stored.setLastCwd(agent, cwd);
  }

  async close() {
    await this.memory.close();
    await this.stored.close();
  }

  private of(key: string): RuntimeSessionStore {
    return this.keys.has(key) ? this.memory : this.stored;
  }
}
