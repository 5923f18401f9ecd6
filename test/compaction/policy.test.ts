import { describe, expect, it } from "vitest";
import { DEFAULT_COMPACTION, resolveCompactionPolicy } from "../../src/compaction/policy.js";
import { dueReason } from "../../src/compaction/trigger.js";

describe("compaction policy", () => {
  it("resolves session over agent over default", () => {
    const policy = resolveCompactionPolicy(
      DEFAULT_COMPACTION,
      { maxMessages: 80, keepRecent: 30 },
      { "compaction.keep_recent": 10 },
    );
    expect(policy).toMatchObject({ maxMessages: 80, keepRecent: 10, maxTokens: 100_000 });
  });

  it("refuses overrides of the wrong type and inconsistent limits", () => {
    expect(() =>
      resolveCompactionPolicy(DEFAULT_COMPACTION, {}, { "compaction.max_messages": "lots" }),
    ).toThrow(/must be a number/);
    expect(() => resolveCompactionPolicy(DEFAULT_COMPACTION, { keepRecent: 60 }, {})).toThrow(/keepRecent/);
  });

  it("is due on each threshold, and never when disabled", () => {
    const p = DEFAULT_COMPACTION;
    expect(dueReason({ messages: 50, tokens: 10 }, p)).toBeUndefined();
    expect(dueReason({ messages: 51, tokens: 10 }, p)).toBe("messages");
    expect(dueReason({ messages: 5, tokens: 100_001 }, p)).toBe("tokens");
    expect(dueReason({ messages: 5, tokens: 6_001 }, p, 8_000)).toBe("window");
    expect(dueReason({ messages: 5, tokens: 5_999 }, p, 8_000)).toBeUndefined();
    expect(dueReason({ messages: 500, tokens: 1e9 }, { ...p, enabled: false })).toBeUndefined();
  });
});
