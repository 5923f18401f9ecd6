import { describe, expect, it } from "vitest";
import { chooseCut } from "../../src/compaction/cut.js";
import { buildTranscript } from "../../src/compaction/transcript.js";
import type { Entry, MessageEntry, Role } from "../../src/model/entry.js";

let seq = 0;
const m = (role: Role, content: string, extra: Partial<MessageEntry> = {}): Entry => ({
  type: "message",
  role,
  content,
  id: `id${++seq}`,
  sessionId: "s",
  seq,
  ts: 0,
  ...extra,
});
const conversation = (...roles: Role[]): Entry[] => {
  seq = 0;
  return roles.map((role, i) => m(role, `${role} ${i + 1}`));
};

describe("chooseCut", () => {
  it("keeps the requested number of recent messages when that starts at a user message", () => {
    const entries = conversation("user", "assistant", "user", "assistant", "user", "assistant");
    const cut = chooseCut(entries, 2)!;
    expect(cut).toMatchObject({ throughSeq: 4, firstKeptSeq: 5 });
    expect(cut.kept.map((e) => e.seq)).toEqual([5, 6]);
    expect(cut.summarised.map((e) => e.seq)).toEqual([1, 2, 3, 4]);
  });

  it("moves the cut back so the kept part starts at a user message", () => {
    const entries = conversation("user", "assistant", "user", "assistant", "user", "assistant");
    // Keeping 3 would start at an assistant reply (seq 4): keep 4 instead, from the user message at seq 3.
    expect(chooseCut(entries, 3)).toMatchObject({ throughSeq: 2, firstKeptSeq: 3 });
  });

  it("never separates a tool call from its results", () => {
    seq = 0;
    const entries = [
      m("user", "q1"),
      m("assistant", "a1"),
      m("user", "what time is it"),
      m("assistant", "", { toolCalls: [{ id: "c1", name: "datetime", arguments: {} }] }),
      m("tool", "12:00", { toolCallId: "c1" }),
      m("assistant", "noon"),
    ];
    for (const keep of [1, 2, 3]) {
      const cut = chooseCut(entries, keep)!;
      expect(cut.firstKeptSeq).toBe(3);
      expect(cut.kept.map((e) => e.type === "message" && e.role)).toEqual([
        "user",
        "assistant",
        "tool",
        "assistant",
      ]);
    }
  });

  it("moves forward when there is no user message before the target, and gives up when there is none at all", () => {
    const entries = conversation("user", "assistant", "assistant", "assistant", "user", "assistant");
    expect(chooseCut(entries, 4)).toMatchObject({ firstKeptSeq: 5 });
    expect(chooseCut(conversation("assistant", "assistant", "assistant"), 1)).toBeUndefined();
    expect(chooseCut(conversation("user", "assistant"), 2)).toBeUndefined();
  });

  it("ignores non-message entries when counting but carries them on the right side", () => {
    seq = 0;
    const entries: Entry[] = [
      m("user", "a"),
      m("assistant", "b"),
      { type: "note", text: "n", id: "n", sessionId: "s", seq: ++seq, ts: 0 },
      m("user", "c"),
      m("assistant", "d"),
    ];
    const cut = chooseCut(entries, 2)!;
    expect(cut.firstKeptSeq).toBe(4);
    expect(cut.summarised.map((e) => e.type)).toEqual(["message", "message", "note"]);
  });
});

describe("buildTranscript", () => {
  it("writes ROLE: content lines, names tool calls and cuts tool results", () => {
    seq = 0;
    const entries = [
      m("user", "hello\nthere", { sender: { id: "42", name: "Ann" } }),
      m("assistant", "checking", { toolCalls: [{ id: "c", name: "search", arguments: {} }] }),
      m("tool", "x".repeat(5000)),
    ];
    const text = buildTranscript(entries, { maxChars: 12_000, toolResultMaxChars: 100 });
    const lines = text.split("\n");
    expect(lines[0]).toBe("USER (Ann): hello there");
    expect(lines[1]).toBe("ASSISTANT: checking [called: search]");
    expect(lines[2]!.length).toBeLessThanOrEqual("TOOL: ".length + 100);
  });

  it("stays within the source limit and keeps a share of every message", () => {
    seq = 0;
    const entries = Array.from({ length: 50 }, (_, i) =>
      m(i % 2 ? "assistant" : "user", `message-${i} ${"word ".repeat(200)}`),
    );
    const text = buildTranscript(entries, { maxChars: 12_000, toolResultMaxChars: 1024 });
    expect(text.length).toBeLessThanOrEqual(12_000);
    for (let i = 0; i < 50; i++) expect(text).toContain(`message-${i} `);
  });

  it("puts the earlier summary first", () => {
    seq = 0;
    const previous = {
      type: "compaction" as const,
      summary: "User is Ann.",
      fromSeq: 1,
      throughSeq: 1,
      firstKeptSeq: 2,
      tokensBefore: 1,
      tokensAfter: 1,
      summarizer: "offline",
      id: "c",
      sessionId: "s",
      seq: 3,
      ts: 0,
    };
    expect(buildTranscript([m("user", "hi")], { maxChars: 100, toolResultMaxChars: 10 }, previous)).toBe(
      "EARLIER SUMMARY: User is Ann.\nUSER: hi",
    );
  });
});
