import { describe, expect, it } from "vitest";
import {
  assembleContext,
  type ChatMessage,
  estimateTokens,
  type InjectedContext,
  stripInjected,
} from "../../src/context/index.js";
import type { CompactionEntry, Entry, EntryBody } from "../../src/model/entry.js";

let seq = 0;
function entry(body: EntryBody): Entry {
  seq += 1;
  return { ...body, id: `e${seq}`, sessionId: "s1", seq, ts: seq } as Entry;
}

const summary = entry({
  type: "compaction",
  summary: "The user is planning a trip to Oslo.",
  fromSeq: 1,
  throughSeq: 10,
  firstKeptSeq: 11,
  tokensBefore: 5000,
  tokensAfter: 200,
  summarizer: "test",
}) as CompactionEntry;

const entries: Entry[] = [
  entry({ type: "message", role: "user", content: "What time is it in Oslo?" }),
  entry({
    type: "message",
    role: "assistant",
    content: "It is 14:00.",
    toolCalls: [{ id: "c1", name: "datetime", arguments: { timezone: "Europe/Oslo" } }],
  }),
  entry({ type: "message", role: "tool", content: '{"time":"14:00"}', toolCallId: "c1" }),
  entry({ type: "note", text: "model switched", level: "info" }),
  entry({ type: "usage", inputTokens: 10, outputTokens: 5 }),
  entry({ type: "title", title: "Oslo trip" }),
  entry({ type: "reset", cause: "manual" }),
  entry({ type: "message", role: "user", content: "stale memory", autoInjected: true }),
  entry({ type: "message", role: "user", content: "And the weather?" }),
];

const injected: InjectedContext[] = [
  { kind: "memory", content: "Prefers Celsius." },
  { kind: "cwd", content: "/home/trip" },
];

const RECAP =
  '[Tool calls behind this reply, recorded by sessiond; results not kept: datetime {"timezone":"Europe/Oslo"}]';

describe("assembleContext", () => {
  it("orders system, summary, history with recaps, and injected context just before the newest user message", () => {
    const { messages } = assembleContext({
      instructions: "You are a travel agent.",
      summary,
      entries,
      injected,
    });
    expect(messages).toEqual([
      { role: "system", content: "You are a travel agent." },
      { role: "user", content: "[Summary of the conversation so far]\nThe user is planning a trip to Oslo." },
      { role: "user", content: "What time is it in Oslo?" },
      { role: "assistant", content: `${RECAP}\nIt is 14:00.` },
      { role: "user", content: "[Auto-injected context: memory]\nPrefers Celsius.", autoInjected: true },
      { role: "user", content: "[Auto-injected context: cwd]\n/home/trip", autoInjected: true },
      { role: "user", content: "And the weather?" },
    ]);
  });

  it("strips the injected context back to the plain assembly", () => {
    const withInjected = assembleContext({ instructions: "I", summary, entries, injected }).messages;
    const without = assembleContext({ instructions: "I", summary, entries }).messages;
    expect(withInjected).toHaveLength(without.length + 2);
    expect(stripInjected(withInjected)).toEqual(without);
  });

  it("is pure: the entries are not changed and nothing of the injected context sticks", () => {
    const before = structuredClone(entries);
    const first = assembleContext({ entries, injected });
    const second = assembleContext({ entries, injected });
    expect(entries).toEqual(before);
    expect(second).toEqual(first);
    expect(assembleContext({ entries }).messages.some((m) => m.content.includes("Prefers Celsius"))).toBe(
      false,
    );
  });

  it("uses the recap label, and a reply made only of tool calls becomes the recap line", () => {
    const only = [
      entry({ type: "message", role: "user", content: "now?" }),
      entry({
        type: "message",
        role: "assistant",
        content: "",
        toolCalls: [
          { id: "failed", name: "clock", arguments: {} },
          { id: "failed", name: "clock", arguments: {} },
        ],
      }),
    ];
    const { messages } = assembleContext({ entries: only, toolRecapLabel: "GoClaw" });
    expect(messages[1]).toEqual({
      role: "assistant",
      content: "[Tool calls behind this reply, recorded by GoClaw; results not kept: clock (failed) ×2]",
    });
  });

  it("puts the injected context at the end when there is no user message", () => {
    const { messages } = assembleContext({ instructions: "I", entries: [], injected: [injected[0]!] });
    expect(messages.map((m) => m.role)).toEqual(["system", "user"]);
    expect(messages[1]!.autoInjected).toBe(true);
  });

  it("leaves out the system and summary messages when there are none", () => {
    const { messages } = assembleContext({ entries: [entries[0]!] });
    expect(messages).toEqual([{ role: "user", content: "What time is it in Oslo?" }]);
  });

  it("estimates tokens as Σ (bytes / 4, rounded up) + 4 per message", () => {
    const { messages, tokensEstimate } = assembleContext({ instructions: "I", summary, entries, injected });
    const expected = messages.reduce((sum: number, m: ChatMessage) => sum + estimateTokens(m.content) + 4, 0);
    expect(tokensEstimate).toBe(expected);
    expect(tokensEstimate).toBeGreaterThan(messages.length * 4);
  });

  it("can pass the history through the stateless window, injecting before the operator prompt", () => {
    const history = [
      entry({ type: "message", role: "user", content: "a" }),
      entry({ type: "message", role: "user", content: "b" }),
      entry({ type: "message", role: "assistant", content: "c" }),
    ];
    const { messages } = assembleContext({ instructions: "I", entries: history, injected, window: {} });
    expect(messages.map((m) => m.content)).toEqual([
      "I",
      "a\n\nb",
      "c",
      "[Auto-injected context: memory]\nPrefers Celsius.",
      "[Auto-injected context: cwd]\n/home/trip",
      "[Human operator]: Please continue.",
    ]);
  });
});
