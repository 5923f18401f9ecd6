import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { entryBody } from "../../model/entry.js";
import { parseStem, stemOf } from "../../store/jsonl/file-names.js";
import { parseSessionFile } from "../../store/jsonl/session-file.js";
import type { ImportItem, SourceRead, SourceSession } from "../types.js";

/**
 * CrabTalk's session directory (behaviours.md §2), read by the JSONL store's own parser: key = CrabTalk's
 * scope (`<agent>:<created_by>`, the `crabtalk` scope) unless sessiond wrote the file; files of one key are
 * its generations in seq order, the last one current; compact markers become compaction entries.
 */
export function readCrabtalk(dir: string): SourceRead {
  const read: SourceRead = { sessions: [], problems: [], toolResultsDropped: 0 };
  const byKey = new Map<string, Array<SourceSession & { order: [number, number] }>>();
  for (const name of jsonlNames(dir)) {
    const file = join(dir, name);
    const bytes = readFileSync(file);
    const { parsed, problems } = parseSessionFile(name, bytes);
    for (const p of problems) read.problems.push({ file, line: p.line, reason: p.reason });
    if (!parsed) continue;
    const items: ImportItem[] = [];
    const indexOfSeq = new Map<number, number>();
    let closed = false;
    // CrabTalk keeps the title on the metadata line; sessiond keeps titles as entries.
    if (parsed.meta.title && !parsed.entries.some((e) => e.type === "title")) {
      const ts = parsed.session.createdAt;
      items.push({
        kind: "entry",
        entry: { type: "title", title: parsed.meta.title.slice(0, 200), by: "crabtalk", ts },
      });
    }
    for (const entry of parsed.entries) {
      indexOfSeq.set(entry.seq, items.length);
      const body = entryBody(entry);
      if (body.type === "reset") {
        closed = true;
        continue;
      }
      if (body.type === "compaction") {
        const keepFrom = indexOfSeq.get(body.firstKeptSeq);
        items.push({
          kind: "compaction",
          summary: body.summary,
          ts: entry.ts,
          tokensBefore: body.tokensBefore,
          ...(keepFrom !== undefined ? { keepFrom } : {}),
        });
        continue;
      }
      items.push({ kind: "entry", entry: { ...body, ts: entry.ts } });
    }
    const { session } = parsed;
    const source = {
      key: session.key,
      init: {
        agent: session.agent,
        channel: session.channel,
        createdBy: session.createdBy,
        ...(session.chatType ? { chatType: session.chatType } : {}),
      },
      sourceId: `crabtalk:${session.id}`,
      file,
      items,
      archived: closed,
      createdAt: session.createdAt,
      order: [session.createdAt, parseStem(stemOf(name))?.seq ?? 0] as [number, number],
    };
    byKey.set(session.key, [...(byKey.get(session.key) ?? []), source]);
  }
  for (const list of byKey.values()) {
    list.sort((a, b) => a.order[0] - b.order[0] || a.order[1] - b.order[1]);
    list.forEach((s, i) => {
      const { order: _order, ...session } = s;
      read.sessions.push({ ...session, archived: session.archived || i < list.length - 1 });
    });
  }
  return read;
}

export function jsonlNames(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isFile() && d.name.endsWith(".jsonl") && !d.name.startsWith("."))
    .map((d) => d.name)
    .sort();
}
