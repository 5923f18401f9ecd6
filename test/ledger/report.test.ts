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
