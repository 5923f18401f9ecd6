import { join } from "node:path";
import type { ChatType } from "../../model/envelope.js";
import { isObject, timeOf } from "../messages.js";
import type { SourceFiles } from "../source-files.js";
import type { ChatOrigin, ImportItem, SourceRead } from "../types.js";
import { emptyRead } from "../types.js";
import { chatItem, keyedSession } from "./chat-lines.js";
import { sessionsDir } from "./dir-files.js";

/**
 * PicoClaw's `sessions/` directory (peer-formats §5): `<key>.jsonl` (one message per line) beside
 * `<key>.meta.json` `{key, summary, skip, count, scope, aliases, created_at}`, and legacy `<key>.json`
 * sessions `{key, messages, summary}`. `skip` counts physical non-empty lines (tool calls, tool results and
 * corrupt lines each count one), so the summary becomes a compaction right after line `skip`: where
 * PicoClaw's context starts. The chat comes from the meta's `scope`, else its most specific alias.
 */
export function readPicoclaw(files: SourceFiles, path: string, agent: string): SourceRead {
  const read = emptyRead(files.problems, files.leftOut);
  const dir = sessionsDir(files, path);
  const names = files.names(dir);
  const stems = new Set(names.filter((n) => n.endsWith(".jsonl")).map((n) => n.slice(0, -".jsonl".length)));
  for (const name of names) {
    if (name.endsWith(".json.migrated"))
      files.leftOut.push({
        file: join(dir, name),
        reason: "a legacy session PicoClaw already moved into its JSONL: read from there",
      });
    if (name.endsWith(".jsonl")) readLog(files, dir, name.slice(0, -".jsonl".length), agent, read);
    else if (
      name.endsWith(".json") &&
      !name.endsWith(".meta.json") &&
      !stems.has(name.slice(0, -".json".length))
    )
      readLegacy(files, join(dir, name), agent, read);
  }
  return read;
}

function readLog(files: SourceFiles, dir: string, stem: string, agent: string, read: SourceRead): void {
  const file = join(dir, `${stem}.jsonl`);
  const metaFile = join(dir, `${stem}.meta.json`);
  const meta = (files.exists(metaFile) ? readMeta(files, metaFile) : undefined) ?? {};
  const skip = typeof meta.skip === "number" && Number.isInteger(meta.skip) && meta.skip > 0 ? meta.skip : 0;
  const summary = typeof meta.summary === "string" && meta.summary !== "" ? meta.summary : undefined;
  const summarisedAt = timeOf(meta.updated_at);
  const compaction: ImportItem | undefined = summary
    ? { kind: "compaction", summary, ...(summarisedAt !== undefined ? { ts: summarisedAt } : {}) }
    : undefined;
  const items: ImportItem[] = [];
  let physical = 0;
  const text = files.text(file);
  if (text === undefined) return;
  const raw = text.split("\n");
  raw.forEach((rawLine, i) => {
    const lineText = rawLine.endsWith("\r") ? rawLine.slice(0, -1) : rawLine;
    if (lineText.length === 0) return;
    if (physical === skip && skip > 0 && compaction) items.push(compaction);
    physical++;
    if (lineText.trim() === "") return;
    const before = read.problems.length;
    const value = files.json(lineText, { file, line: i + 1 });
    if (!isObject(value)) {
      if (read.problems.length === before)
        read.problems.push({ file, line: i + 1, reason: "not a JSON object" });
      else if (i === raw.length - 1 && read.problems.at(-1)?.reason === "not JSON")
        read.problems.splice(-1, 1, { file, line: i + 1, reason: "torn last line (not JSON)" });
      return;
    }
    const item = chatItem(file, i + 1, value, read.problems);
    if (item) items.push(item);
  });
  // Summary and nothing (left) before it: the log was rewritten, or skip ran past the end.
  if (compaction && !items.includes(compaction)) {
    if (physical <= skip) items.push(compaction);
    else items.unshift(compaction);
  }
  const key = typeof meta.key === "string" && meta.key !== "" ? meta.key : stem;
  const session = keyedSession(key, agent, `picoclaw:${key}`, file, items, false, timeOf(meta.created_at));
  const origin = originOf(meta, agent);
  read.sessions.push(origin ? { ...session, origin } : session);
}

function readLegacy(files: SourceFiles, file: string, agent: string, read: SourceRead): void {
  const value = readMeta(files, file);
  if (value === undefined) return;
  if (!Array.isArray(value.messages)) {
    read.problems.push({ file, reason: "not a PicoClaw session (no messages list)" });
    return;
  }
  const items: ImportItem[] = [];
  if (typeof value.summary === "string" && value.summary !== "")
    items.push({ kind: "compaction", summary: value.summary });
  value.messages.forEach((m: unknown, i) => {
    if (!isObject(m)) {
      read.problems.push({ file, row: `messages[${i}]`, reason: "not a JSON object" });
      return;
    }
    const item = chatItem(file, 0, m, []);
    if (item) items.push(item);
    else
      read.problems.push({ file, row: `messages[${i}]`, reason: `unknown role ${JSON.stringify(m.role)}` });
  });
  const stem = file.slice(file.lastIndexOf("/") + 1, -".json".length);
  const key = typeof value.key === "string" && value.key !== "" ? value.key : stem;
  const session = keyedSession(key, agent, `picoclaw:${key}`, file, items, false, timeOf(value.created));
  const origin = originOf({ aliases: [key] }, agent);
  read.sessions.push(origin ? { ...session, origin } : session);
}

/** A whole-file JSON object (a meta file, a legacy session); `{}` after a reported problem, undefined when unreadable. */
function readMeta(files: SourceFiles, file: string): Record<string, unknown> | undefined {
  const text = files.text(file);
  if (text === undefined) return undefined;
  const before = files.problems.length;
  const value = files.json(text, { file }, "not readable JSON:", files.limits.fileBytes);
  if (isObject(value)) return value;
  if (files.problems.length === before) files.problems.push({ file, reason: "not a JSON object" });
  return {};
}

/**
 * The chat of a PicoClaw session: `scope` `{agent_id, channel, account, values{chat: "<type>:<id>[/<topic>]",
 * sender?, topic?}}`, else the most specific OpenClaw-shaped alias (`agent:<a>:<ch>[:<acct>]:<kind>:<peer>`).
 */
function originOf(meta: Record<string, unknown>, fallbackAgent: string): ChatOrigin | undefined {
  const aliases = Array.isArray(meta.aliases)
    ? meta.aliases.filter((a): a is string => typeof a === "string")
    : [];
  const fromAlias = aliases
    .map((a) => aliasOrigin(a, fallbackAgent))
    .filter((o): o is ChatOrigin => o !== undefined)
    .sort((a, b) => (b.account ? 1 : 0) - (a.account ? 1 : 0))[0];
  const scope = isObject(meta.scope) ? meta.scope : undefined;
  const values = isObject(scope?.values) ? scope.values : {};
  if (scope && typeof scope.channel === "string" && scope.channel !== "" && typeof values.chat === "string") {
    const at = values.chat.indexOf(":");
    const type = at > 0 ? values.chat.slice(0, at) : "direct";
    const [chatId = "", topic] = (at > 0 ? values.chat.slice(at + 1) : values.chat).split("/");
    const chatType = chatTypeOf(type);
    const agent =
      typeof scope.agent_id === "string" && scope.agent_id !== "" ? scope.agent_id : fallbackAgent;
    // A group's session is the whole group's unless the scope has a sender dimension.
    const sender =
      typeof values.sender === "string"
        ? values.sender
        : chatType === "direct"
          ? (fromAlias?.senderId ?? chatId)
          : undefined;
    const thread = typeof values.topic === "string" ? values.topic.replace(/^topic:/, "") : topic;
    return {
      agent: agent === "main" ? fallbackAgent : agent,
      channel: scope.channel,
      chatType,
      chatId,
      ...(sender !== undefined ? { senderId: sender } : {}),
      ...(thread ? { threadId: thread } : {}),
      ...(typeof scope.account === "string" && scope.account !== "default" ? { account: scope.account } : {}),
    };
  }
  return fromAlias;
}

function aliasOrigin(alias: string, fallbackAgent: string): ChatOrigin | undefined {
  const m = /^agent:([^:]+):([^:]+):(?:([^:]+):)?(direct|group|channel):(.+)$/.exec(alias);
  if (!m?.[1] || !m[2] || !m[4] || !m[5]) return undefined;
  const [peer = "", topic] = m[5].split("/");
  const chatType = chatTypeOf(m[4]);
  return {
    agent: m[1] === "main" ? fallbackAgent : m[1],
    channel: m[2],
    chatType,
    chatId: peer,
    ...(chatType === "direct" ? { senderId: peer } : {}),
    ...(topic ? { threadId: topic } : {}),
    ...(m[3] && m[3] !== "default" ? { account: m[3] } : {}),
  };
}

function chatTypeOf(type: string): ChatType {
  return type === "group" || type === "channel" || type === "thread" ? type : "direct";
}
