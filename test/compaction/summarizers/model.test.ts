import { describe, expect, it } from "vitest";
import {
  cleanSummary,
  modelSummarizer,
  summaryMaxTokens,
} from "../../../src/compaction/summarizers/model.js";
import { SUMMARY_SYSTEM_PROMPT, SUMMARY_TEMPERATURE } from "../../../src/compaction/summarizers/prompt.js";
import type { Completion, CompletionRequest, TextModel } from "../../../src/model/text-model.js";

function fakeModel(
  answer: string | ((request: CompletionRequest) => string),
): TextModel & { calls: CompletionRequest[] } {
  const calls: CompletionRequest[] = [];
  return {
    provider: "openai",
    model: "gpt-fake",
    calls,
    async complete(request: CompletionRequest): Promise<Completion> {
      calls.push(request);
      return { text: typeof answer === "string" ? answer : answer(request), model: "gpt-fake-2026" };
    },
  };
}

describe("modelSummarizer", () => {
  it("names itself after the provider and model", () => {
    const summarizer = modelSummarizer(fakeModel("x"));
    expect(summarizer.name).toBe("openai");
    expect(summarizer.model).toBe("gpt-fake");
  });

  it("puts the limit, the identifiers, the earlier summary and the transcript into the prompt", async () => {
    const model = fakeModel("Dense summary.");
    const signal = new AbortController().signal;
    const result = await modelSummarizer(model).summarize({
      transcript: "USER: deploy https://example.com/app to eu-west-1\nASSISTANT: done",
      maxChars: 2_000,
      identifiers: ["https://example.com/app", "eu-west-1"],
      previousSummary: "User is Ana; prefers terse replies.",
      signal,
    });
    expect(result).toEqual({ summary: "Dense summary.", model: "gpt-fake-2026" });
    const [call] = model.calls;
    expect(call?.system).toBe(SUMMARY_SYSTEM_PROMPT);
    expect(call?.temperature).toBe(SUMMARY_TEMPERATURE);
    expect(call?.temperature).toBe(0.2);
    expect(call?.maxTokens).toBe(667);
    expect(call?.signal).toBe(signal);
    expect(call?.user).toContain("at most 2000 characters");
    expect(call?.user).toMatch(/must appear verbatim[^\n]*\n- https:\/\/example\.com\/app\n- eu-west-1/);
    expect(call?.user).toContain("User is Ana; prefers terse replies.");
    expect(call?.user).toContain("USER: deploy https://example.com/app to eu-west-1\nASSISTANT: done");
  });

  it("does not send the earlier summary twice when the transcript already carries it", async () => {
    const model = fakeModel("s");
    await modelSummarizer(model).summarize({
      transcript: "EARLIER SUMMARY: Ana likes tea.\nUSER: hi",
      maxChars: 500,
      identifiers: [],
      previousSummary: "Ana likes tea.",
    });
    expect(model.calls[0]?.user.split("Ana likes tea.")).toHaveLength(2);
    expect(model.calls[0]?.user).not.toContain("verbatim in the summary:");
  });

  it("asks for about a token per three characters, at least 64", () => {
    expect(summaryMaxTokens(2_000)).toBe(667);
    expect(summaryMaxTokens(16_000)).toBe(5_334);
    expect(summaryMaxTokens(100)).toBe(64);
  });

  it("strips fences and labels but leaves length and identifiers unchecked", async () => {
    const long = "word ".repeat(200);
    const result = await modelSummarizer(fakeModel(`Summary:\n${long}`)).summarize({
      transcript: "USER: x",
      maxChars: 50,
      identifiers: ["ID-404"],
    });
    expect(result.summary).toBe(long.trim());
  });
});

describe("cleanSummary", () => {
  it.each([
    ["  plain text  ", "plain text"],
    ["Summary: Ana wants tea.", "Ana wants tea."],
    ["**Summary:** Ana wants tea.", "Ana wants tea."],
    ["**Summary**: Ana wants tea.", "Ana wants tea."],
    ["## Summary\nAna wants tea.", "Ana wants tea."],
    ["```\nAna wants tea.\n```", "Ana wants tea."],
    ["```markdown\nSummary: Ana wants tea.\n```", "Ana wants tea."],
    ["Here is the updated summary:\nAna wants tea.", "Ana wants tea."],
    ["Summary of decisions is below. Ana wants tea.", "Summary of decisions is below. Ana wants tea."],
    ["Ana's summary: wants tea.", "Ana's summary: wants tea."],
  ])("%j", (input, expected) => {
    expect(cleanSummary(input)).toBe(expected);
  });
});
