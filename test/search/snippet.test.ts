import { describe, expect, it } from "vitest";
import { parseTerms } from "../../src/search/query.js";
import { makeSnippet } from "../../src/search/snippet.js";

describe("makeSnippet", () => {
  it("masks a secret-shaped string even in text stored before redaction", () => {
    const snippet = makeSnippet(
      "deploy with ghp_0123456789abcdefABCDEF0123456789abcd now",
      parseTerms("deploy"),
    );
    expect(snippet).toBe("<mark>deploy</mark> with [redacted] now");
  });

  it("cuts long text around the first match at word boundaries, marked with …", () => {
    const text = `${"lorem ipsum ".repeat(20)}the needle is here ${"dolor sit ".repeat(30)}`;
    const snippet = makeSnippet(text, parseTerms("needle"));
    expect(snippet.startsWith("…")).toBe(true);
    expect(snippet.endsWith("…")).toBe(true);
    expect(snippet).toContain("the <mark>needle</mark> is here");
    expect(snippet.length).toBeLessThan(230);
  });

  it("escapes HTML inside and outside the marks, and marks word starts before inner matches", () => {
    expect(makeSnippet("<i>cat</i> & concatenate", parseTerms("cat"))).toBe(
      "&lt;i&gt;<mark>cat</mark>&lt;/i&gt; &amp; concatenate",
    );
  });
});
