import { countTokens as cl100k } from "gpt-tokenizer/encoding/cl100k_base";
import { countTokens as o200k, encodeChat as o200kChat } from "gpt-tokenizer/encoding/o200k_base";
import { describe, expect, it } from "vitest";
import {
  countMessagesTokens,
  countTokens,
  encodingForModel,
  estimateMessagesTokens,
  estimateTokens,
  loadTokenCounter,
  tokenizerLoads,
} from "../../src/context/index.js";
import { estimateTokens as modelEstimate } from "../../src/model/entry.js";

const SAMPLES = [
  "Hello, world!",
  "héllo wörld 你好 🎉",
  "function add(a: number, b: number): number {\n  return a + b;\n}",
  "   many   spaces\t\tand\ttabs\n\n\n",
  "",
];

// Runs first: nothing in this file has counted yet, so no encoder module has been imported.
describe("lazy loading", () => {
  it("imports an encoder only on first use, once per encoding, and hands out one instance", async () => {
    expect(tokenizerLoads()).toBe(0);
    const [a, b] = await Promise.all([loadTokenCounter(), loadTokenCounter("gpt-4o")]);
    expect(tokenizerLoads()).toBe(1);
    expect(a).toBe(b);
    expect(await loadTokenCounter("o3-mini")).toBe(a);
    expect(tokenizerLoads()).toBe(1);

    const cl = await loadTokenCounter("gpt-4");
    expect(tokenizerLoads()).toBe(2);
    expect(cl).not.toBe(a);
    expect(cl.encoding).toBe("cl100k_base");
    expect(await loadTokenCounter("gpt-3.5-turbo")).toBe(cl);
    expect(tokenizerLoads()).toBe(2);
  });
});

describe("encodingForModel", () => {
  it.each([
    ["gpt-4o", "o200k_base"],
    ["gpt-4o-mini", "o200k_base"],
    ["gpt-4.1", "o200k_base"],
    ["gpt-4.5-preview", "o200k_base"],
    ["gpt-5", "o200k_base"],
    ["o1", "o200k_base"],
    ["o3-mini", "o200k_base"],
    ["o4-mini", "o200k_base"],
    ["some-unknown-model", "o200k_base"],
    [undefined, "o200k_base"],
    ["gpt-4", "cl100k_base"],
    ["gpt-4-turbo", "cl100k_base"],
    ["gpt-4-0613", "cl100k_base"],
    ["gpt-3.5-turbo", "cl100k_base"],
    ["text-embedding-3-small", "cl100k_base"],
    ["text-embedding-3-large", "cl100k_base"],
    ["openai/gpt-4", "cl100k_base"],
    ["GPT-4", "cl100k_base"],
    ["ft:gpt-3.5-turbo:acme::abc", "cl100k_base"],
  ])("%s → %s", (model, encoding) => {
    expect(encodingForModel(model)).toBe(encoding);
  });
});

describe("countTokens", () => {
  it.each(SAMPLES)("matches gpt-tokenizer under o200k_base and cl100k_base: %j", async (text) => {
    expect(await countTokens(text)).toBe(o200k(text));
    expect(await countTokens(text, "gpt-4o")).toBe(o200k(text));
    expect(await countTokens(text, "gpt-4")).toBe(cl100k(text));
  });

  it("tells the encodings apart", async () => {
    const text = "héllo wörld 你好 🎉";
    expect(o200k(text)).not.toBe(cl100k(text));
    expect(await countTokens(text, "gpt-4o")).toBe(9);
    expect(await countTokens(text, "gpt-3.5-turbo")).toBe(12);
  });

  it("counts special-token strings in user text as plain text instead of throwing", async () => {
    const text = "ignore this <|endoftext|> marker";
    await expect(countTokens(text)).resolves.toBe(o200k(text, { disallowedSpecial: new Set() }));
    expect(() => o200k(text)).toThrow();
  });

  it("gives a loaded counter that counts synchronously", async () => {
    const counter = await loadTokenCounter("gpt-4.1");
    expect(counter.count("Hello, world!")).toBe(o200k("Hello, world!"));
  });
});

describe("countMessagesTokens", () => {
  it("matches gpt-tokenizer's own chat framing", async () => {
    const chat = [
      { role: "system" as const, content: "You are helpful." },
      { role: "user" as const, content: "Hello there, how are you?" },
      { role: "assistant" as const, content: "Fine, thanks. 你好" },
    ];
    expect(await countMessagesTokens(chat, "gpt-4o")).toBe(o200kChat(chat, "gpt-4o").length);
  });
});

describe("estimates", () => {
  it("re-exports the model's estimate: UTF-8 bytes / 4, rounded up", () => {
    expect(estimateTokens).toBe(modelEstimate);
    expect(estimateTokens("abcde")).toBe(2);
    expect(estimateTokens("é")).toBe(1);
    expect(estimateTokens("🎉🎉")).toBe(2);
  });

  it("adds 4 per message", () => {
    expect(
      estimateMessagesTokens([
        { role: "user", content: "abcde" },
        { role: "assistant", content: "" },
      ]),
    ).toBe(2 + 4 + 0 + 4);
  });
});
