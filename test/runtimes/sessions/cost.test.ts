import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  type CostBaseline,
  measureTotal,
  perRunCost,
  type TotalReport,
} from "../../../src/runtimes/sessions/cost.js";
import { MemoryRuntimeSessionStore } from "../../../src/runtimes/sessions/memory.js";
import { SqliteRuntimeSessionStore } from "../../../src/runtimes/sessions/sqlite.js";
import type { RuntimeSessionStore } from "../../../src/runtimes/sessions/store.js";

/** Applies reported totals in order, as runs r1, r2…, on one runtime session; returns each run's cost. */
function apply(totals: number[], options: { resumedFirst?: boolean; start?: CostBaseline } = {}) {
  let baseline = options.start;
  return totals.map((totalUsd, i) => {
    const report: TotalReport = {
      runId: `r${i + 1}`,
      runtimeSessionId: "cc-1",
      totalUsd,
      resumed: i > 0 || options.resumedFirst === true,
    };
    const measured = measureTotal(baseline, report);
    baseline = measured.baseline;
    return measured.cost;
  });
}

describe("cost against the session's baseline (behaviours §5 test vectors)", () => {
  it("totals 2 then 5 cost 2 and 3", () => {
    expect(apply([2, 5])).toEqual([
      { status: "priced", usd: 2 },
      { status: "priced", usd: 3 },
    ]);
  });

  it("the first run seen on a session that already existed is not measured and becomes the baseline", () => {
    expect(apply([7, 9], { resumedFirst: true })).toEqual([
      { status: "not_measured" },
      { status: "priced", usd: 2 },
    ]);
  });

  it("a total of 0 after a positive baseline (a crashed run) costs 0, ambiguous; the next run re-anchors", () => {
    expect(apply([2, 5, 0, 1.5])).toEqual([
      { status: "priced", usd: 2 },
      { status: "priced", usd: 3 },
      { status: "ambiguous", usd: 0 },
      { status: "priced", usd: 1.5 },
    ]);
  });

  it("a total that goes backwards costs 0, ambiguous, and the next run is measured from it", () => {
    expect(apply([5, 3, 4])).toEqual([
      { status: "priced", usd: 5 },
      { status: "ambiguous", usd: 0 },
      { status: "priced", usd: 1 },
    ]);
  });

  it("applying the last figure twice changes nothing; a later figure of the same run replaces it", () => {
    const first = measureTotal(undefined, {
      runId: "r1",
      runtimeSessionId: "cc-1",
      totalUsd: 2,
      resumed: false,
    });
    const r2 = { runId: "r2", runtimeSessionId: "cc-1", totalUsd: 5, resumed: true };
    const once = measureTotal(first.baseline, r2);
    const twice = measureTotal(once.baseline, r2);
    expect(twice).toEqual(once);
    expect(once.cost).toEqual({ status: "priced", usd: 3 });
    expect(measureTotal(once.baseline, { ...r2, totalUsd: 5.5 }).cost).toEqual({
      status: "priced",
      usd: 3.5,
    });
  });

  it("keeps cents exact (0.1 + 0.2)", () => {
    expect(apply([0.1, 0.3])).toEqual([
      { status: "priced", usd: 0.1 },
      { status: "priced", usd: 0.2 },
    ]);
  });

  it("passes a per-run figure through; no figure is unpriced, never a verified zero", () => {
    expect(perRunCost(0.25)).toEqual({ status: "priced", usd: 0.25 });
    expect(perRunCost(0)).toEqual({ status: "priced", usd: 0 });
    expect(perRunCost(undefined)).toEqual({ status: "unpriced" });
  });
});

async function recordTotals(store: RuntimeSessionStore, runs: Array<[string, number]>): Promise<void> {
  for (const [runId, totalUsd] of runs) {
    const measured = measureTotal(await store.baseline("dev", "k1"), {
      runId,
      runtimeSessionId: "cc-1",
      totalUsd,
      resumed: runId !== "r1",
    });
    await store.recordCost(
      { agent: "dev", key: "k1", runId, runtime: "claude-code", at: 1, ...measured.cost },
      measured.baseline,
    );
  }
}

describe.each([
  ["memory", () => new MemoryRuntimeSessionStore()],
  ["sqlite", () => new SqliteRuntimeSessionStore(join(mkdtempSync(join(tmpdir(), "sessiond-rs-")), "rs.db"))],
])("the cost ledger (%s)", (_name, open) => {
  it("sums per conversation and per agent, counting priced, unpriced, ambiguous and not measured runs", async () => {
    const store = open();
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
    expect(await store.totals({ key: "k1" })).toEqual({
      usd: 5.5,
      pricedRuns: 3,
      unpricedRuns: 0,
      ambiguousRuns: 1,
      notMeasuredRuns: 0,
    });
    expect(await store.totals({ agent: "dev" })).toEqual({
      usd: 5,
      pricedRuns: 2,
      unpricedRuns: 1,
      ambiguousRuns: 1,
      notMeasuredRuns: 1,
    });
    expect(await store.costOf("dev", "k1", "r2")).toEqual({ status: "priced", usd: 3 });
    await store.close();
  });

  it("records a run once when its figure is applied twice", async () => {
    const store = open();
    await recordTotals(store, [
      ["r1", 2],
      ["r2", 5],
      ["r2", 5],
    ]);
    expect(await store.totals({ key: "k1" })).toEqual({
      usd: 5,
      pricedRuns: 2,
      unpricedRuns: 0,
      ambiguousRuns: 0,
      notMeasuredRuns: 0,
    });
    await store.close();
  });
});

describe("the SQLite runtime sessions file", () => {
  it("survives a restart: sessions, baselines, costs and marks are read back from the reopened file", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "sessiond-rs-")), "runtime-sessions.db");
    const before = new SqliteRuntimeSessionStore(path);
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

    const after = new SqliteRuntimeSessionStore(path);
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
});
