import { describe, expect, it } from "vitest";
import type { Entry } from "../../src/model/entry.js";
import { encodeEntry } from "../../src/store/jsonl/crabtalk-format.js";
import { encodeLine, jsonString } from "../../src/store/jsonl/json-line.js";

const texts = [
  "",
  "plain words, the common case",
  'a "quoted" word',
  "back\\slash",
  "new\nline, tab\t, carriage\r, bell\u0007, nul\u0000, unit separator\u001f",
  "emoji 🦀 pairs",
  "a lone high surrogate \ud800 here",
  "a lone low surrogate \udc00",
  "line and paragraph separators \u2028 \u2029",
  "delete \u007f and latin é and CJK 漢字",
  "ends with a backslash \\",
];

describe("JSON lines written without JSON.stringify for the common fields", () => {
  it("quotes every string exactly as JSON.stringify does", () => {
    for (const text of texts) expect(jsonString(text)).toBe(JSON.stringify(text));
  });

  it("writes a line byte for byte as JSON.stringify and a newline would", () => {
    const date = new Date(Date.UTC(2026, 10, 30));
    const lines: object[] = [
      {},
      { role: "user", content: texts[1], seq: 1, id: "01HX", ts: 1_796_000_000_000 },
      {
        numbers: 0,
        negativeZero: -0,
        big: 1e21,
        small: 1.5e-7,
        fraction: -2.25,
        nan: Number.NaN,
        inf: Infinity,
      },
      { yes: true, no: false, nothing: null, skipped: undefined, fn: () => 1, sym: Symbol("s") },
      { nested: { a: [1, "two", { three: texts[4] }], b: null }, list: [undefined, texts[6]], date },
      { custom: { toJSON: () => undefined }, after: "kept" },
      { [texts[2]!]: "a key that needs escaping", "🦀": texts[5] },
      { only: undefined },
      ...texts.map((content, seq) => ({ role: "assistant", content, seq })),
    ];
    for (const line of lines) expect(encodeLine(line)).toBe(`${JSON.stringify(line)}\n`);
  });

  it("writes only the object's own fields, in their order", () => {
    const base = { inherited: "no" };
    const line = Object.create(base) as Record<string, unknown>;
    line.z = 1;
    line.a = "x";
    expect(encodeLine(line)).toBe('{"z":1,"a":"x"}\n');
  });
});

/** The line object of every kind of entry, as the format describes it (crabtalk-format.ts). */
function lineObject(entry: Entry, withSessionId: boolean): Record<string, unknown> {
  const { id, sessionId, seq, ts, idempotencyKey, ...body } = entry;
  const header = {
    seq,
    id,
    ts,
    ...(withSessionId ? { sessionId } : {}),
    ...(idempotencyKey !== undefined ? { idempotencyKey } : {}),
  };
  switch (body.type) {
    case "message": {
      const { type: _type, role, content, ...rest } = body;
      // CrabTalk's own fields right after `content` (empty ones left out), sessiond's after the header.
      const reasoning = (body.parts ?? []).filter((p) => p.kind === "thinking").map((p) => p.text);
      const crabtalk = {
        ...(reasoning.length ? { reasoning_content: reasoning.join("\n") } : {}),
        ...(role === "tool" && body.toolCallId ? { tool_call_id: body.toolCallId } : {}),
        ...(body.toolCalls?.length
          ? {
              tool_calls: body.toolCalls.map((c) => ({
                id: c.id,
                type: "function",
                function: { name: c.name, arguments: JSON.stringify(c.arguments) },
              })),
            }
          : {}),
      };
      return { role, content, ...crabtalk, ...header, ...rest };
    }
    case "compaction": {
      const { type: _type, summary, ...rest } = body;
      return { compact: summary, ...header, ...rest };
    }
    default:
      return { ...body, ...header };
  }
}

describe("an entry's line", () => {
  const header = (seq: number, extra: Partial<Entry> = {}) => ({
    id: `01HX${seq}`,
    sessionId: "s-1",
    seq,
    ts: 1_796_000_000_000 + seq,
    ...extra,
  });
  const entries: Entry[] = [
    { ...header(1), type: "message", role: "user", content: texts[1]! },
    { ...header(2, { idempotencyKey: 'tg:"42"' }), type: "message", role: "assistant", content: texts[4]! },
    {
      ...header(3),
      type: "message",
      role: "assistant",
      content: "",
      toolCalls: [{ id: "c1", name: "search", arguments: '{"q":"crab"}' }],
      replyTo: "01HX2",
      sender: { id: "u1", name: "Ann 🦀" },
    },
    { ...header(4), type: "message", role: "tool", content: texts[6]!, toolCallId: "c1" },
    {
      ...header(4),
      type: "message",
      role: "assistant",
      content: "ok",
      parts: [{ kind: "thinking", text: 'think "hard"' }],
    },
    { ...header(5), type: "compaction", summary: texts[2]!, fromSeq: 1, throughSeq: 3, firstKeptSeq: 4 },
    { ...header(6), type: "title", title: "Crab talk", by: "model" },
    { ...header(7), type: "note", text: "a\nnote", level: "warn" },
    { ...header(8), type: "usage", model: "m", inputTokens: 10, outputTokens: 2, costUsd: 0.0001 },
    { ...header(9), type: "reset", cause: "daily", nextSessionId: "s-2" },
  ] as Entry[];

  it("is the bytes JSON.stringify writes for the format's line object, for every kind of entry", () => {
    for (const withSessionId of [false, true])
      for (const entry of entries)
        expect(encodeEntry(entry, withSessionId)).toBe(
          `${JSON.stringify(lineObject(entry, withSessionId))}\n`,
        );
  });
});
