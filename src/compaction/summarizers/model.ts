import type { Summarizer, SummaryRequest, SummaryResult } from "../../model/summarizer.js";
import type { TextModel } from "../../model/text-model.js";
import { buildSummaryPrompt, SUMMARY_TEMPERATURE } from "./prompt.js";

/** About three characters per token, with room for a short answer. */
export function summaryMaxTokens(maxChars: number): number {
  return Math.max(64, Math.ceil(maxChars / 3));
}

const FENCE = /^```[\w-]*[ \t]*\n([\s\S]*?)\n?```$/;
const HEADING_LABEL =
  /^#{1,6}[ \t]*(?:conversation[ \t]+|compacted[ \t]+|updated[ \t]+)?summary[ \t]*:?[ \t]*(?:\n|$)/i;
const INLINE_LABEL =
  /^(?:\*\*|__)?(?:conversation[ \t]+|compacted[ \t]+|updated[ \t]+)?summary[ \t]*(?::[ \t]*(?:\*\*|__)|(?:\*\*|__)[ \t]*:|:)[ \t]*/i;
const PREAMBLE = /^here(?:'s| is) (?:the|a|your) [^\n:]{0,40}summary[^\n]{0,40}:[ \t]*\n/i;

/** Strips what models wrap a summary in: code fences, a `Summary:` label or heading, a preamble. */
export function cleanSummary(text: string): string {
  let out = text.trim();
  for (let pass = 0; pass < 3; pass++) {
    const before = out;
    const fenced = FENCE.exec(out);
    if (fenced) out = (fenced[1] ?? "").trim();
    out = out.replace(PREAMBLE, "").trim();
    out = out.replace(HEADING_LABEL, "").trim();
    out = out.replace(INLINE_LABEL, "").trim();
    if (out === before) break;
  }
  return out;
}

/**
 * A summariser backed by a TextModel. It returns the model's text cleaned of labels; checking the
 * length and the identifiers is the compactor's job.
 */
export function modelSummarizer(model: TextModel): Summarizer {
  return {
    name: model.provider,
    model: model.model,
    async summarize(request: SummaryRequest): Promise<SummaryResult> {
      const { system, user } = buildSummaryPrompt(request);
      const completion = await model.complete({
        system,
        user,
        maxTokens: summaryMaxTokens(request.maxChars),
        temperature: SUMMARY_TEMPERATURE,
        ...(request.signal ? { signal: request.signal } : {}),
      });
      return { summary: cleanSummary(completion.text), model: completion.model || model.model };
    },
  };
}
