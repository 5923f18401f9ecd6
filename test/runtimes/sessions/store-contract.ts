import { describe, expect, it } from "vitest";
import { type CostBaseline, measureTotal } from "../../../src/runtimes/sessions/cost.js";
import type { RuntimeSessionStore } from "../../../src/runtimes/sessions/store.js";

/** How a backend's runtime-session store is opened for one test; `reopen` opens the same data again. */
export interface RuntimeSessionStoreFactory {
  open(): Promise<RuntimeSessionStore>;
  reopen?: () => Promise<RuntimeSessionStore>;
}

/** Applies reported running totals in order as runs of (agent, key) on runtime session cc-1. */
export async function recordTotals(
  store: RuntimeSessionStore,
  runs: Array<[string, number]>,
  where: { agent: string; key: string } = { agent: "dev", key: "k1" },
): Promise<void> {
  for (const [runId, totalUsd] of runs) {
    const measured = measureTotal(await store.baseline(where.agent, where.key), {
      runId,
      runtimeSessionId: "cc-1",
      totalUsd,
      resumed: runId !== "r1",
    });
    await store.recordCost(
      { ...where, runId, runtime: "claude-code", at: 1, ...measured.cost },
      measured.baseline,
    );
  }
}

const totals = (usd: number, priced: number, extra: Partial<Record<string, number>> = {}) => ({
  usd,
  pricedRuns: priced,
  unpricedRuns: 0,
  ambiguousRuns: 0,
  notMeasuredRuns: 0,
  ...extra,
});

const baselineAt = (totalUsd: number): CostBaseline => ({
  last: { runtimeSessionId: "cc-1", totalUsd },
  lastRunId: "r1",
});

/** The behaviour every `RuntimeSessionStore` has (memory, SQLite, PostgreSQL). */
export function runtimeSessionStoreContract(name: string, factory: RuntimeSessionStoreFactory): void {
  describe(`${name} runtime sessions (contract)`, () => {
    it("saves one runtime session per agent and key, replaced by the next, listed per key by agent", async () => {
      const store = await factory.open();
      expect(await store.get("dev", "k1")).toBeUndefined();
      await store.save({ agent: "dev", key: "k1", runtime: "claude-code", id: "cc-1", savedAt: 1 });
      await store.save({ agent: "dev", key: "k1", runtime: "claude-code", id: "cc-2", savedAt: 2 });
      await store.save({
        agent: "remote",
        key: "k1",
        runtime: "a2a",
        id: "ctx-9",
        data: { taskId: "t-1" },
        savedAt: 3,
      });
      await store.save({ agent: "dev", key: "k2", runtime: "codex", id: "th-1", savedAt: 4 });
      expect(await store.get("dev", "k1")).toEqual({
        agent: "dev",
        key: "k1",
        runtime: "claude-code",
        id: "cc-2",
        savedAt: 2,
      });
      expect(await store.forKey("k1")).toEqual([
        { agent: "dev", key: "k1", runtime: "claude-code", id: "cc-2", savedAt: 2 },
        { agent: "remote", key: "k1", runtime: "a2a", id: "ctx-9", data: { taskId: "t-1" }, savedAt: 3 },
      ]);
      await store.close();
    });

    it("clears an agent's sessions and baselines (its ledger stays); deletes a key's or an agent's everything", async () => {
      const store = await factory.open();
      for (const [agent, key] of [
        ["dev", "k1"],
        ["dev", "k2"],
        ["ops", "k1"],
      ] as const) {
        await store.save({ agent, key, runtime: "claude-code", id: `${agent}-${key}`, savedAt: 1 });
        await recordTotals(store, [["r1", 2]], { agent, key });
        await store.setAttention(agent, key, "failed", 5);
      }
      await store.setLastCwd("dev", "/srv/app");
      expect(await store.clearAgent("dev")).toEqual(["k1", "k2"]);
      expect(await store.get("dev", "k1")).toBeUndefined();
      expect(await store.baseline("dev", "k1")).toBeUndefined();
      expect(await store.baseline("ops", "k1")).toBeDefined();
      expect(await store.totals({ agent: "dev" })).toEqual(totals(4, 2));

      await store.deleteKey("k1");
      expect(await store.forKey("k1")).toEqual([]);
      expect(await store.attention("k1")).toEqual([]);
      expect(await store.totals({ key: "k1" })).toEqual(totals(0, 0));
      expect(await store.attentionKeys()).toEqual(new Set(["k2"]));

      await store.deleteAgent("dev");
      expect(await store.attentionKeys()).toEqual(new Set());
      expect(await store.totals({})).toEqual(totals(0, 0));
      expect(await store.lastCwd("dev")).toBeUndefined();
      await store.close();
    });

    it("clears the session and baseline of one agent in one conversation; its ledger and every other session stay", async () => {
      const store = await factory.open();
      for (const [agent, key] of [
        ["dev", "k1"],
        ["dev", "k2"],
        ["ops", "k1"],
      ] as const) {
        await store.save({
          agent,
          key,
          runtime: "claude-code",
          id: `${agent}-${key}`,
          data: {
            "sessiond.turns": JSON.stringify([{ sessionId: "s1", inputSeq: 1, runId: "r1", at: "u1" }]),
          },
          savedAt: 1,
        });
        await recordTotals(store, [["r1", 2]], { agent, key });
      }
      await store.clear("dev", "k1");
      await store.clear("dev", "k9");
      expect(await store.get("dev", "k1")).toBeUndefined();
      expect(await store.baseline("dev", "k1")).toBeUndefined();
      expect(await store.costOf("dev", "k1", "r1")).toEqual({ status: "priced", usd: 2 });
      expect((await store.forKey("k1")).map((r) => r.agent)).toEqual(["ops"]);
      expect(await store.get("dev", "k2")).toMatchObject({
        id: "dev-k2",
        data: { "sessiond.turns": expect.stringContaining('"at":"u1"') },
      });
      expect(await store.baseline("dev", "k2")).toBeDefined();
      await store.close();
    });

    it("marks needs-attention per agent and key and clears the mark", async () => {
      const store = await factory.open();
      await store.setAttention("ops", "k1", "exit 1", 7);
      await store.setAttention("dev", "k1", "resume failed", 8);
      await store.setAttention("dev", "k1", "resume failed again", 9);
      await store.setAttention("dev", "k2", undefined);
      expect(await store.attention("k1")).toEqual([
        { agent: "dev", key: "k1", error: "resume failed again", at: 9 },
        { agent: "ops", key: "k1", error: "exit 1", at: 7 },
      ]);
      await store.setAttention("ops", "k1", undefined);
      expect(await store.attention("k1")).toEqual([
        { agent: "dev", key: "k1", error: "resume failed again", at: 9 },
      ]);
      expect(await store.attentionKeys()).toEqual(new Set(["k1"]));
      await store.close();
    });

    it("remembers an agent's last working directory, null included", async () => {
      const store = await factory.open();
      expect(await store.lastCwd("dev")).toBeUndefined();
      await store.setLastCwd("dev", "/srv/app");
      await store.setLastCwd("dev", "/srv/other");
      await store.setLastCwd("ops", null);
      expect(await store.lastCwd("dev")).toBe("/srv/other");
      expect(await store.lastCwd("ops")).toBeNull();
      await store.close();
    });

    it("sums per conversation and per agent, counting priced, unpriced, ambiguous and not measured runs", async () => {
      const store = await factory.open();
      await recordTotals(store, [
        ["r1", 2],
        ["r2", 5],
        ["r3", 0],
      ]);
      await store.recordCost({
        agent: "dev",
        key: "k2",
        runId: "x1",
        runtime: "codex",
        at: 1,
        status: "unpriced",
      });
      await store.recordCost({
        agent: "dev",
        key: "k2",
        runId: "x2",
        runtime: "claude-code",
        at: 1,
        status: "not_measured",
      });
      await store.recordCost({
        agent: "ops",
        key: "k1",
        runId: "y1",
        runtime: "model",
        at: 1,
        status: "priced",
        usd: 0.5,
      });
      expect(await store.totals({ key: "k1" })).toEqual(totals(5.5, 3, { ambiguousRuns: 1 }));
      expect(await store.totals({ agent: "dev" })).toEqual(
        totals(5, 2, { unpricedRuns: 1, ambiguousRuns: 1, notMeasuredRuns: 1 }),
      );
      expect(await store.totals({ key: "k1", agent: "ops" })).toEqual(totals(0.5, 1));
      expect(await store.costOf("dev", "k1", "r2")).toEqual({ status: "priced", usd: 3 });
      expect(await store.costOf("dev", "k2", "x1")).toEqual({ status: "unpriced" });
      expect(await store.costOf("dev", "k1", "nope")).toBeUndefined();
      await store.close();
    });

    it("records a run once when its figure is applied twice", async () => {
      const store = await factory.open();
      await recordTotals(store, [
        ["r1", 2],
        ["r2", 5],
        ["r2", 5],
      ]);
      expect(await store.totals({ key: "k1" })).toEqual(totals(5, 2));
      await store.close();
    });

    it("writes the records of one event-loop turn together; the last of a run and the last baseline win", async () => {
      const store = await factory.open();
      const record = { agent: "dev", key: "k1", runtime: "claude-code", at: 1 } as const;
      await Promise.all([
        store.recordCost({ ...record, runId: "r1", status: "priced", usd: 1 }, baselineAt(1)),
        store.recordCost({ ...record, runId: "r1", status: "priced", usd: 2 }, baselineAt(2)),
        store.recordCost({ ...record, runId: "r2", status: "unpriced" }),
      ]);
      expect(await store.costOf("dev", "k1", "r1")).toEqual({ status: "priced", usd: 2 });
      expect(await store.baseline("dev", "k1")).toEqual(baselineAt(2));
      expect(await store.totals({ key: "k1" })).toEqual(totals(2, 1, { unpricedRuns: 1 }));
      await store.close();
    });

    if (factory.reopen) {
      const reopen = factory.reopen;
      it("survives a restart: sessions, baselines, costs and marks are read back", async () => {
        const before = await factory.open();
        await before.save({ agent: "dev", key: "k1", runtime: "claude-code", id: "cc-1", savedAt: 10 });
        await before.save({
          agent: "remote",
          key: "k1",
          runtime: "a2a",
          id: "ctx-9",
          data: { taskId: "t-1" },
          savedAt: 11,
        });
        await recordTotals(before, [["r1", 2]]);
        await before.setAttention("dev", "k1", "resume failed", 12);
        await before.setLastCwd("dev", "/srv/app");
        await before.close();

        const after = await reopen();
        expect(await after.forKey("k1")).toEqual([
          { agent: "dev", key: "k1", runtime: "claude-code", id: "cc-1", savedAt: 10 },
          { agent: "remote", key: "k1", runtime: "a2a", id: "ctx-9", data: { taskId: "t-1" }, savedAt: 11 },
        ]);
        expect(await after.attention("k1")).toEqual([
          { agent: "dev", key: "k1", error: "resume failed", at: 12 },
        ]);
        expect(await after.lastCwd("dev")).toBe("/srv/app");
        await recordTotals(after, [["r2", 5]]);
        expect(await after.costOf("dev", "k1", "r2")).toEqual({ status: "priced", usd: 3 });
        expect(await after.totals({ key: "k1" })).toMatchObject({ usd: 5, pricedRuns: 2 });
        await after.close();
      });
    }
  });
}
