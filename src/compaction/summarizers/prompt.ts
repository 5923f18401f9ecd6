import type { SummaryRequest } from "../../model/summarizer.js";

/** ZeroClaw's summariser temperature: low, so summaries stay close to the text. */
export const SUMMARY_TEMPERATURE = 0.2;

export const SUMMARY_SYSTEM_PROMPT = [
  "You compact the history of a conversation between a user and an AI agent. Your summary replaces the",
  "older messages in the agent's context, so the agent must be able to carry on from it alone.",
  "",
  "Write dense prose (short paragraphs or terse lines, no preamble, no title, no closing remark). Keep:",
  "- the agent's identity, role and persona as established in the conversation;",
  "- the user's profile and preferences (names, language, tone, likes and dislikes);",
  "- decisions made, and briefly why;",
  "- commitments the agent made;",
  "- open tasks and their status;",
  "- pending user asks: questions or requests not yet answered or done;",
  "- constraints and rules the user set;",
  "- key facts needed to continue.",
  "Copy identifiers exactly as written: ids, URLs, file paths, names, numbers, amounts, dates. Never",
  "paraphrase, round, shorten or translate them. Every identifier you are told to keep must appear",
  "verbatim.",
  "Drop greetings, filler, pleasantries, repetition, tool logs and raw tool output (keep only what a tool",
  "call established).",
  "An earlier summary, when given, is part of what you summarise: keep what still holds, update what",
  "changed.",
  "Write in the language the user writes in. Respect the character limit you are given: a summary over",
  "it is discarded.",
].join("\n");

const EARLIER_SUMMARY_LINE = /^EARLIER SUMMARY: /m;

/** The user message for a summary request: limit, identifiers, earlier summary, transcript. */
export function buildSummaryUserMessage(request: SummaryRequest): string {
  const parts: string[] = [
    `Hard limit: the summary must be at most ${request.maxChars} characters, spaces included.`,
  ];
  if (request.identifiers.length > 0) {
    parts.push(
      `These identifiers must appear verbatim in the summary:\n${request.identifiers.map((id) => `- ${id}`).join("\n")}`,
    );
  }
  // The compactor may already have put the earlier summary into the transcript; don't send it twice.
  if (request.previousSummary && !EARLIER_SUMMARY_LINE.test(request.transcript)) {
    parts.push(
      `Earlier summary (part of what you summarise):\n<earlier_summary>\n${request.previousSummary}\n</earlier_summary>`,
    );
  }
  parts.push(`Transcript (ROLE: content, oldest first):\n<transcript>\n${request.transcript}\n</transcript>`);
  parts.push(
    `Write the summary now: at most ${request.maxChars} characters, only the summary text, every listed identifier verbatim.`,
  );
  return parts.join("\n\n");
}

export function buildSummaryPrompt(request: SummaryRequest): { system: string; user: string } {
  return { system: SUMMARY_SYSTEM_PROMPT, user: buildSummaryUserMessage(request) };
}
