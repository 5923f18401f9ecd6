import { describe, expect, it } from "vitest";
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
