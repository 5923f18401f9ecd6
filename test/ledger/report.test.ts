import { describe, expect, it } from "vitest";
import { costText } from "../../src/cli/commands/cost.js";
import { callEntry, costQueryFrom, costReport, MemoryCostLedger } from "../../src/ledger/index.js";

const at = "2026-12-06T10:00:00.000Z";
const usage = { inputTokens: 1000, outputTokens: 100 };

async function reportOf(prices: Array<{ input: number; output: number } | undefined>) {
  const ledger = new MemoryCostLedger();
  for (const [i, price] of prices.entries()) {
    const context = {
      agent: "main",
      sessionId: `s${i}`,
      key: `k${i}`,
      kind: "turn" as const,
      model: "m",
      at,
    };
    await ledger.record(callEntry(context, "openai", usage, price));
  }
  return costReport(ledger, costQueryFrom("agent", undefined));
}

describe("the cost report as `sessiond cost` prints it", () => {
  it("a group with no known price says unknown, never $0", async () => {
    const text = costText(await reportOf([undefined, undefined]));
    expect(text).toMatch(/^main\s+2\s+unknown\s+2\s/m);
    expect(text).not.toContain("$0");
    expect(text).toContain("No call has a known price: the cost is unknown");
  });

  it("a total with unpriced calls is marked as a lower bound", async () => {
    const report = await reportOf([{ input: 2, output: 10 }, undefined]);
    expect(report.lowerBound).toBe(true);
    expect(costText(report)).toMatch(/^main\s+2\s+≥ \$0\.003000\s+1\s/m);
    expect(costText(report)).toContain(
      "1 of 2 calls have no known price: figures marked ≥ are lower bounds.",
    );
  });

  it("every call priced: the exact figure, no lower-bound note", async () => {
    const report = await reportOf([{ input: 2, output: 10 }]);
    expect(report.lowerBound).toBe(false);
    expect(costText(report)).toMatch(/^main\s+1\s+\$0\.003000\s+0\s/m);
    expect(costText(report)).not.toContain("lower bound");
  });

  it("bad grouping or time: INVALID_ARGUMENT naming it", () => {
    expect(() => costQueryFrom("week", undefined)).toThrow(/by must be one of session, agent, day/);
    expect(() => costQueryFrom("day", "yesterday")).toThrow(/since must be an ISO 8601 date/);
    expect(costQueryFrom(undefined, "2026-12-01")).toEqual({ by: "day", since: "2026-12-01T00:00:00.000Z" });
  });
});

describe("the memory ledger stays bounded", () => {
  it("past its entry cap it folds the oldest into day sums: every total as before, a forgotten key still rewritten", async () => {
    const { MemoryCostLedger: Ledger } = await import("../../src/ledger/index.js");
    const small = new Ledger(5);
    const whole = new Ledger(1000);
    const days = ["2026-12-04", "2026-12-05", "2026-12-06"];
    for (let i = 0; i < 40; i++) {
      const context = {
        agent: i % 3 === 0 ? "helper" : "main",
        sessionId: `s${i % 4}`,
        key: `k${i % 4}`,
        kind: "turn" as const,
        model: "m",
        at: `${days[Math.floor(i / 14)]}T0${i % 10}:00:00.000Z`,
      };
      const entry = callEntry(
        context,
        "openai",
        { inputTokens: 100 + i, outputTokens: 10, cacheReadTokens: i },
        i % 5 === 0 ? undefined : { input: 2, output: 10 },
      );
      await small.record(entry);
      await whole.record(entry);
    }
    expect((small as unknown as { entries: unknown[] }).entries).toHaveLength(5);
    for (const by of ["session", "agent", "day"] as const) {
      expect(await small.totals(by)).toEqual(await whole.totals(by));
      // A since at a day's start is exact for folded days too.
      expect(await small.totals(by, { since: "2026-12-05T00:00:00.000Z" })).toEqual(
        await whole.totals(by, { since: "2026-12-05T00:00:00.000Z" }),
      );
    }
    expect(await small.forgetKey("k1", "secret")).toBe(10);
    expect(await small.totals("session")).toEqual(await whole.totals("session"));
  });
});
