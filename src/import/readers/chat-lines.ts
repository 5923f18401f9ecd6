import type { JsonLine } from "../jsonl-lines.js";
import { messageEntry, reasoningParts, timeOf, toolCallsOf } from "../messages.js";
import type { ImportItem, ImportProblem, SourceSession } from "../types.js";

/**
 * One OpenAI-style chat line (`{"role","content","tool_calls"?,"tool_call_id"?,"reasoning_content"?,
 * "timestamp"?}`), as nanobot, PicoClaw and CrabTalk write them, as an entry; a tool result is a `tool`
 * message linked to its call. Undefined (and a reported problem) when it is not a message.
 */
export function chatItem(
  file: string,
  line: number,
  value: Record<string, unknown>,
  problems: ImportProblem[],
): ImportItem | undefined {
  const ts = timeOf(value.timestamp ?? value.created_at ?? value.ts);
  const read = messageEntry(value.role, value.content, {
    ...(ts !== undefined ? { ts } : {}),
    toolCalls: toolCallsOf(value.tool_calls),
    toolCallId: value.tool_call_id,
    parts: reasoningParts(value.reasoning_content),
  });
  if ("entry" in read) return { kind: "entry", entry: read.entry };
  problems.push({ file, line, reason: read.error });
  return undefined;
}

/** Every chat line of a file as an entry, in order. */
export function chatItems(file: string, lines: JsonLine[], problems: ImportProblem[]): ImportItem[] {
  return lines.flatMap(({ line, value }) => chatItem(file, line, value, problems) ?? []);
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
