import { join } from "node:path";
import { readJsonLines } from "../jsonl-lines.js";
import { timeOf } from "../messages.js";
import type { SourceRead } from "../types.js";
import { chatItems, keyedSession, keyFromStem } from "./chat-lines.js";
import { jsonlNames } from "./crabtalk.js";

/**
 * nanobot's `sessions/` directory: one `<channel>_<chat_id>.jsonl` per key, line 1
 * `{"_type":"metadata","key"?,"created_at","updated_at","metadata","last_consolidated"}`, then chat
 * lines. nanobot consolidates into its memory files rather than a summary line, so no compaction comes in.
 */
export function readNanobot(dir: string, agent: string): SourceRead {
  const read: SourceRead = { sessions: [], problems: [], toolResultsDropped: 0 };
  for (const name of jsonlNames(dir)) {
    const file = join(dir, name);
    const lines = readJsonLines(file, read.problems);
    const first = lines[0];
    const meta = first?.value._type === "metadata" ? first.value : undefined;
    const key = typeof meta?.key === "string" ? meta.key : keyFromStem(name.slice(0, -".jsonl".length));
    const { items, toolResults } = chatItems(file, meta ? lines.slice(1) : lines, read.problems);
    read.toolResultsDropped += toolResults;
    const createdAt = timeOf(meta?.created_at);
    read.sessions.push(keyedSession(key, agent, `nanobot:${key}`, file, items, false, createdAt));
  }
  return read;
}
