import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { readJsonLines } from "../jsonl-lines.js";
import { isObject, timeOf } from "../messages.js";
import type { ImportItem, SourceRead } from "../types.js";
import { chatItems, keyedSession, keyFromStem } from "./chat-lines.js";
import { jsonlNames } from "./crabtalk.js";

/**
 * PicoClaw's `sessions/` directory: `<name>.jsonl` chat lines beside `<name>.meta.json`
 * `{key, summary, skip, count, created_at, updated_at}`, the metadata written before the log is rewritten.
 * Read as: the summary stands for the first `skip` lines of the log (none left when the log was already
 * rewritten); it becomes a compaction entry after them.
 */
export function readPicoclaw(dir: string, agent: string): SourceRead {
  const read: SourceRead = { sessions: [], problems: [], toolResultsDropped: 0 };
  for (const name of jsonlNames(dir)) {
    const stem = name.slice(0, -".jsonl".length);
    const file = join(dir, name);
    const metaFile = join(dir, `${stem}.meta.json`);
    let meta: Record<string, unknown> = {};
    if (existsSync(metaFile)) {
      try {
        const value: unknown = JSON.parse(readFileSync(metaFile, "utf8"));
        if (isObject(value)) meta = value;
        else read.problems.push({ file: metaFile, reason: "not a JSON object" });
      } catch {
        read.problems.push({ file: metaFile, line: 1, reason: "not JSON" });
      }
    }
    const key = typeof meta.key === "string" ? meta.key : keyFromStem(stem);
    const { items: messages, toolResults } = chatItems(
      file,
      readJsonLines(file, read.problems),
      read.problems,
    );
    read.toolResultsDropped += toolResults;
    const items: ImportItem[] = [...messages];
    if (typeof meta.summary === "string" && meta.summary !== "") {
      const skip = typeof meta.skip === "number" ? Math.max(0, Math.min(meta.skip, messages.length)) : 0;
      items.splice(skip, 0, { kind: "compaction", summary: meta.summary });
    }
    const createdAt = timeOf(meta.created_at);
    read.sessions.push(keyedSession(key, agent, `picoclaw:${key}`, file, items, false, createdAt));
  }
  return read;
}
