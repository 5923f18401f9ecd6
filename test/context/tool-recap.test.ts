import { describe, expect, it } from "vitest";
import { recordToolCalls, toolCallRecap } from "../../src/context/index.js";
import type { ToolCall } from "../../src/model/entry.js";

const call = (name: string, args: Record<string, unknown> = {}, id = "c"): ToolCall => ({
  id,
  name,
  arguments: args,
});

describe("toolCallRecap", () => {
  it("collapses identical calls with ×N", () => {
    const calls = [call("datetime", { timezone: "UTC" }, "a"), call("datetime", { timezone: "UTC" }, "b")];
    expect(toolCallRecap(calls)).toBe(
      '[Tool calls behind this reply, recorded by sessiond; results not kept: datetime {"timezone":"UTC"} ×2]',
    );
  });

  it("uses the label, keeps first-seen order, separates items with ; and treats key order as the same call", () => {
    const calls = [
      call("search", { q: "x", n: 1 }),
      call("datetime"),
      call("search", { n: 1, q: "x" }),
      call("search", { q: "y" }),
    ];
    expect(toolCallRecap(calls, "GoClaw")).toBe(
      '[Tool calls behind this reply, recorded by GoClaw; results not kept: search {"q":"x","n":1} ×2; datetime; search {"q":"y"}]',
    );
  });

  it("marks failed calls and keeps them apart from successful ones", () => {
    const calls = [
      call("fetch", { url: "a" }, "failed"),
      call("fetch", { url: "a" }, "ok"),
      call("fetch", { url: "a" }, "failed"),
    ];
    expect(toolCallRecap(calls)).toBe(
      '[Tool calls behind this reply, recorded by sessiond; results not kept: fetch {"url":"a"} (failed) ×2; fetch {"url":"a"}]',
    );
  });

  it("lists at most 8 distinct calls, then counts the remaining calls", () => {
    const calls = Array.from({ length: 10 }, (_, i) => call(`t${i}`));
    calls.push(call("t9"), call("t0"));
    const line = toolCallRecap(calls);
    expect(line).toBe(
      "[Tool calls behind this reply, recorded by sessiond; results not kept: t0 ×2; t1; t2; t3; t4; t5; t6; t7; and 3 more]",
    );
    expect(line).not.toContain("t8");
  });

  it("is empty without calls", () => {
    expect(toolCallRecap([])).toBe("");
  });

  it("works on recorded calls, where failures carry the id `failed`", () => {
    const recorded = recordToolCalls([
      { id: "x", name: "datetime", arguments: { timezone: "UTC" }, failed: true },
    ]);
    expect(toolCallRecap(recorded)).toContain('datetime {"timezone":"UTC"} (failed)]');
  });
});
