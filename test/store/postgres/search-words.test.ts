import { describe, expect, it } from "vitest";
import { tsqueryOf, tsvectorOf } from "../../../src/store/postgres/search-words.js";

describe("PostgreSQL search words computed by sessiond", () => {
  it("folds case and accents and splits on punctuation, with positions", () => {
    expect(tsvectorOf("Café au lait, café!")).toBe("'cafe':1,4 'au':2 'lait':3");
    expect(tsvectorOf("!!!")).toBe("");
  });

  it("keeps PostgreSQL's limits: no word over 2,047 bytes, 256 positions a word, none past 16,383", () => {
    expect(tsvectorOf(`${"ж".repeat(1024)} ok`)).toBe("'ok':2");
    expect(tsvectorOf(`${"é".repeat(1024)} ok`)).toContain("'ok':2");
    const many = tsvectorOf(Array.from({ length: 300 }, () => "the").join(" "));
    expect(many.split(",")).toHaveLength(256);
    const late = tsvectorOf(`${"x ".repeat(20_000)}late`);
    expect(late).toContain("'late':16383");
  });

  it("turns terms into a tsquery: phrases in a row, the last word typed as a prefix, CJK left to the trigrams", () => {
    expect(
      tsqueryOf([
        { text: "Meeting notes", phrase: true },
        { text: "北京", phrase: false },
        { text: "dra", phrase: false },
      ]),
    ).toBe("('meeting' <-> 'notes') & 'dra':*");
    expect(tsqueryOf([{ text: "北京", phrase: false }])).toBeUndefined();
  });
});
