import type { Entry } from "../model/entry.js";
import type { Session } from "../model/session.js";
import { orderSessions } from "./sessions.js";

/** A readable transcript: title heading, the session's facts, then each entry in order. Times are UTC. */
export function exportMarkdown(sessions: readonly Session[], entries: readonly Entry[]): string {
  const { current, generations } = orderSessions(sessions);
  const several = generations.length > 1;
  const out: string[] = [`# ${oneLine(current.title) || current.key}`, "", ...facts(current, generations)];
  const bySession = new Map<string, Entry[]>();
  for (const entry of entries) {
    const list = bySession.get(entry.sessionId) ?? [];
    list.push(entry);
    bySession.set(entry.sessionId, list);
  }
  for (const session of generations) {
    const list = bySession.get(session.id);
    if (several) {
      const state = session.archivedAt !== undefined ? `archived ${utc(session.archivedAt)}` : session.state;
      out.push("", `## Generation ${session.generation} — ${code(session.id)} (${state})`);
    }
    if (!list || list.length === 0) {
      out.push("", "*No entries.*");
      continue;
    }
    for (const entry of list) out.push("", ...entryBlock(entry));
  }
  return `${out.join("\n")}\n`;
}

function facts(session: Session, generations: readonly Session[]): string[] {
  const overrides = Object.entries(session.overrides);
  const lines = [
    `- **Key:** ${code(session.key)}`,
    `- **Session:** ${code(session.id)} (generation ${session.generation}, ${session.state})`,
    `- **Agent:** ${session.agent}`,
    `- **Channel:** ${session.channel}${session.chatType ? ` (${session.chatType})` : ""}`,
    `- **Created by:** ${oneLine(session.createdBy)}`,
    `- **Created:** ${utc(session.createdAt)}`,
    `- **Last activity:** ${utc(session.lastActivityAt)}`,
    `- **Messages:** ${session.messageCount} (${session.entryCount} entries)`,
  ];
  if (overrides.length > 0) {
    lines.push(`- **Overrides:** ${overrides.map(([k, v]) => code(`${k}=${String(v)}`)).join(", ")}`);
  }
  if (generations.length > 1) lines.push(`- **Generations:** ${generations.length}`);
  return lines;
}

function entryBlock(entry: Entry): string[] {
  const at = `${utc(entry.ts)} · #${entry.seq}`;
  switch (entry.type) {
    case "message": {
      const who = entry.sender ? ` (${oneLine(entry.sender.name ?? entry.sender.id)})` : "";
      const block = [
        `**${entry.role}**${who} · ${at}`,
        "",
        entry.content === "" ? "*(empty)*" : entry.content,
      ];
      for (const part of entry.parts ?? []) {
        block.push("", `- attachment (${part.kind}): ${oneLine(part.name ?? part.url ?? part.text ?? "")}`);
      }
      for (const call of entry.toolCalls ?? []) {
        block.push("", `- tool call ${code(call.name)} ${code(JSON.stringify(call.arguments))}`);
      }
      return block;
    }
    case "compaction": {
      const model = entry.model ? `, ${entry.model}` : "";
      const head = `> **Compacted #${entry.fromSeq}–#${entry.throughSeq}** · ${at} (${entry.tokensBefore} → ${entry.tokensAfter} tokens, by ${entry.summarizer}${model})`;
      return [head, ">", ...entry.summary.split("\n").map((line) => (line === "" ? ">" : `> ${line}`))];
    }
    case "reset":
      return [`*Reset (${entry.cause})* · ${at}`];
    case "title":
      return [`*Title set to “${oneLine(entry.title)}”${entry.by ? ` by ${entry.by}` : ""}* · ${at}`];
    case "note": {
      const tags = [entry.level, entry.code].filter((t) => t !== undefined).join(", ");
      return [`*Note${tags ? ` (${tags})` : ""}* · ${at}: ${entry.text}`];
    }
    case "usage":
      return [`*Usage* · ${at}: ${usageText(entry)}`];
  }
}

export function usageText(entry: {
  model?: string;
  inputTokens?: number;
  outputTokens?: number;
  costUsd?: number;
}): string {
  const parts: string[] = [];
  if (entry.model) parts.push(entry.model);
  if (entry.inputTokens !== undefined) parts.push(`${entry.inputTokens} in`);
  if (entry.outputTokens !== undefined) parts.push(`${entry.outputTokens} out`);
  if (entry.costUsd !== undefined) parts.push(`$${entry.costUsd}`);
  return parts.join(", ") || "(nothing reported)";
}

function utc(ts: number): string {
  return `${new Date(ts).toISOString().slice(0, 19).replace("T", " ")} UTC`;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

/** An inline code span that survives backticks in its text. */
function code(text: string): string {
  const longest = Math.max(0, ...Array.from(text.matchAll(/`+/g), (m) => m[0].length));
  const fence = "`".repeat(longest + 1);
  const pad = text.startsWith("`") || text.endsWith("`") ? " " : "";
  return `${fence}${pad}${oneLine(text)}${pad}${fence}`;
}
