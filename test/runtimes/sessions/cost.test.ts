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
import { runtimeSessionStoreContract } from "./store-contract.js";

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

runtimeSessionStoreContract("memory", { open: async () => new MemoryRuntimeSessionStore() });

let path = "";
runtimeSessionStoreContract("sqlite", {
  open: async () => {
    path = join(mkdtempSync(join(tmpdir(), "sessiond-rs-")), "runtime-sessions.db");
    return new SqliteRuntimeSessionStore(path);
  },
  reopen: async () => new SqliteRuntimeSessionStore(path),
});
