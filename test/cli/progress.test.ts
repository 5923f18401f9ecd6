import { describe, expect, it } from "vitest";
import { progressReporter } from "../../src/cli/format/progress.js";

describe("progressReporter", () => {
  it("redraws a bar in place on a terminal and ends the line when done", () => {
    let out = "";
    const report = progressReporter((t) => (out += t), true, "importing");
    report(1, 4);
    report(4, 4);
    expect(out).toBe(
      `\rimporting [${"#".repeat(8)}${"-".repeat(22)}] 1/4\rimporting [${"#".repeat(30)}] 4/4\n`,
    );
  });

  it("prints plain count lines every so many items, and the last one, elsewhere", () => {
    const lines: string[] = [];
    const report = progressReporter((t) => lines.push(t), false, "importing", 10);
    for (let i = 1; i <= 25; i++) report(i, 25);
    expect(lines).toEqual(["importing: 10/25\n", "importing: 20/25\n", "importing: 25/25\n"]);
  });
});
