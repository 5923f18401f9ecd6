import type { CompactionEntry, Entry } from "../model/entry.js";

export interface TranscriptLimits {
  maxChars: number;
  toolResultMaxChars: number;
}

function cutTo(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, Math.max(0, max - 1))}…`;
}

/** One `ROLE: content` line per message; tool calls named, tool results cut. */
function lines(entries: readonly Entry[], toolResultMaxChars: number): string[] {
  const out: string[] = [];
  for (const e of entries) {
    if (e.type !== "message") continue;
    const who = e.sender?.name ?? e.sender?.id;
    const role = e.role.toUpperCase() + (who && e.role === "user" ? ` (${who})` : "");
    let content = e.role === "tool" ? cutTo(e.content, toolResultMaxChars) : e.content;
    if (e.toolCalls?.length) content += ` [called: ${e.toolCalls.map((c) => c.name).join(", ")}]`;
    out.push(`${role}: ${content.replace(/\s+/g, " ").trim()}`);
  }
  return out;
}

/**
 * The transcript a summariser reads, at most `maxChars`. When the messages are longer, each line gets
 * an equal share (short lines give their unused share to long ones), so every message is represented
 * rather than the oldest or newest being dropped whole.
 */
export function buildTranscript(
  entries: readonly Entry[],
  limits: TranscriptLimits,
  previous?: CompactionEntry,
): string {
  const all = lines(entries, limits.toolResultMaxChars);
  if (previous) all.unshift(`EARLIER SUMMARY: ${previous.summary.replace(/\s+/g, " ").trim()}`);
  const separators = Math.max(0, all.length - 1);
  let budget = limits.maxChars - separators;
  if (all.join("\n").length <= limits.maxChars) return all.join("\n");
  const order = all.map((line, i) => ({ i, length: line.length })).sort((a, b) => a.length - b.length);
  const caps = new Array<number>(all.length);
  let remaining = all.length;
  for (const { i, length } of order) {
    const share = Math.floor(budget / remaining);
    caps[i] = Math.min(length, Math.max(0, share));
    budget -= caps[i]!;
    remaining--;
  }
  return all
    .map((line, i) => cutTo(line, caps[i]!))
    .join("\n")
    .slice(0, limits.maxChars);
}
