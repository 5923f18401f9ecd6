import type { JsonLine } from "../jsonl-lines.js";
import { messageEntry, timeOf, toolCallsOf } from "../messages.js";
import type { ImportItem, ImportProblem, SourceSession } from "../types.js";

/**
 * OpenAI-style chat lines (`{"role","content","tool_calls"?,"timestamp"?}`), as ZeroClaw, nanobot and
 * PicoClaw write them: messages become entries, tool results are counted and left out.
 */
export function chatItems(
  file: string,
  lines: JsonLine[],
  problems: ImportProblem[],
): { items: ImportItem[]; toolResults: number } {
  const items: ImportItem[] = [];
  let toolResults = 0;
  for (const { line, value } of lines) {
    const ts = timeOf(value.timestamp ?? value.created_at ?? value.ts);
    const read = messageEntry(value.role, value.content, {
      ...(ts !== undefined ? { ts } : {}),
      toolCalls: toolCallsOf(value.tool_calls),
    });
    if ("entry" in read) items.push({ kind: "entry", entry: read.entry });
    else if ("toolResult" in read) toolResults++;
    else problems.push({ file, line, reason: read.error });
  }
  return { items, toolResults };
}

/** A key written as a file name with `:` turned into `_` (`telegram_123` → `telegram:123`). */
export function keyFromStem(stem: string): string {
  const at = stem.indexOf("_");
  return at > 0 ? `${stem.slice(0, at)}:${stem.slice(at + 1)}` : stem;
}

/** The channel and the rest of a `<channel>:<id>` key. */
export function splitKey(key: string): { channel: string; id: string } {
  const at = key.indexOf(":");
  return at > 0 ? { channel: key.slice(0, at), id: key.slice(at + 1) } : { channel: "import", id: key };
}

/** A session of a system whose keys are `<channel>:<id>` and whose files name no agent. */
export function keyedSession(
  key: string,
  agent: string,
  sourceId: string,
  file: string,
  items: ImportItem[],
  archived: boolean,
  createdAt?: number,
): SourceSession {
  const { channel, id } = splitKey(key);
  return {
    key,
    init: { agent, channel, createdBy: id },
    sourceId,
    file,
    items,
    archived,
    ...(createdAt !== undefined ? { createdAt } : {}),
  };
}
