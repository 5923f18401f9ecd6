import { usageText } from "../../export/markdown.js";
import type { Entry } from "../../model/entry.js";
import { printable } from "./table.js";
import { formatDateTime } from "./time.js";

const INDENT = "    ";

/** `#seq time role/sender: content`, continuation lines indented; other entry types in the same shape. */
export function formatEntry(entry: Entry): string {
  const head = `#${entry.seq} ${formatDateTime(entry.ts)}`;
  switch (entry.type) {
    case "message": {
      const who = entry.sender ? `${entry.role}/${entry.sender.name ?? entry.sender.id}` : entry.role;
      const extra = [
        ...(entry.parts ?? []).map((p) => `[${p.kind}] ${p.name ?? p.url ?? p.text ?? ""}`.trimEnd()),
        ...(entry.toolCalls ?? []).map((c) => `[tool call] ${c.name} ${JSON.stringify(c.arguments)}`),
      ];
      return block(`${head} ${who}: ${entry.content}`, extra);
    }
    case "compaction": {
      const range = `#${entry.fromSeq}–#${entry.throughSeq}`;
      const tokens = `${entry.tokensBefore} → ${entry.tokensAfter} tokens`;
      return block(`${head} compaction of ${range} (${tokens}, by ${entry.summarizer}): ${entry.summary}`, [
        `context continues from #${entry.firstKeptSeq}`,
      ]);
    }
    case "reset":
      return block(
        `${head} reset (${entry.cause})`,
        entry.nextSessionId ? [`next session ${entry.nextSessionId}`] : [],
      );
    case "title":
      return block(`${head} title: ${JSON.stringify(entry.title)}${entry.by ? ` (by ${entry.by})` : ""}`, []);
    case "note": {
      const tags = [entry.level, entry.code].filter((t) => t !== undefined).join(" ");
      return block(`${head} note${tags ? ` [${tags}]` : ""}: ${entry.text}`, []);
    }
    case "usage":
      return block(`${head} usage: ${usageText(entry)}`, []);
  }
}

function block(first: string, extra: readonly string[]): string {
  const lines = printable(first).split("\n");
  const [head = "", ...rest] = lines;
  return `${[head, ...rest.map((l) => INDENT + l), ...extra.map((l) => INDENT + printable(l))].join("\n")}\n`;
}
