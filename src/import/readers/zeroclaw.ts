import { basename, join } from "node:path";
import { parseCappedJson } from "../json-text.js";
import { readJsonLines } from "../jsonl-lines.js";
import { DEFAULT_IMPORT_LIMITS } from "../limits.js";
import { isObject, messageEntry, reasoningParts, timeOf, toolCallsOf } from "../messages.js";
import type { SourceFiles } from "../source-files.js";
import type { ChatOrigin, ImportItem, ImportProblem, SourceRead } from "../types.js";
import { emptyRead } from "../types.js";
import { keyedSession, keyFromStem } from "./chat-lines.js";
import { jsonlNames } from "./dir-files.js";
import { cappedText, columnsOf, hasTable, rowWithinCaps, withDatabase } from "./sqlite-rows.js";

/**
 * ZeroClaw (peer-formats §3): `<workspace>/sessions/<sanitized key>.jsonl` (exactly `{role, content}` per
 * line) and/or `sessions.db` (`sessions(id, session_key, role, content, created_at)` rows in id order,
 * `session_metadata` with the name and the chat's channel, room and sender). Structure lives inside the
 * content: an assistant tool-call turn is JSON text `{content, tool_calls[{id,name,arguments}]}`, a tool
 * result `{content, tool_call_id}`, a user turn starts with `[<local time> <offset>] `. ZeroClaw keeps no
 * compaction on disk. A JSONL file the database already imported (`jsonl_import_receipts`) is skipped.
 */
export function readZeroclaw(files: SourceFiles, path: string, agent: string): SourceRead {
  const read = emptyRead(files.problems, files.leftOut);
  const isFile = !files.isDirectory(path);
  const candidates = isFile ? [path] : [join(path, "sessions.db"), join(path, "sessions", "sessions.db")];
  const receipts = new Set<string>();
  for (const file of candidates) if (files.exists(file)) readDatabase(files, file, agent, read, receipts);
  if (isFile) return read;
  for (const dir of [path, join(path, "sessions")]) {
    if (!files.isDirectory(dir)) continue;
    for (const name of files.names(dir).filter((n) => n.endsWith(".jsonl.migrated")))
      files.leftOut.push({
        file: join(dir, name),
        reason: "ZeroClaw's copy of a JSONL file it moved into sessions.db: read from there",
      });
    for (const name of jsonlNames(files, dir)) {
      if (receipts.has(name)) {
        files.leftOut.push({
          file: join(dir, name),
          reason: "already in sessions.db (jsonl_import_receipts): read from there",
        });
        continue;
      }
      const file = join(dir, name);
      const stem = name.slice(0, -".jsonl".length);
      const items: ImportItem[] = [];
      const clock = { ts: undefined as number | undefined };
      for (const { line, value } of readJsonLines(files, file)) {
        if (typeof value.role !== "string" || typeof value.content !== "string") {
          read.problems.push({ file, line, reason: "not a ZeroClaw message ({role, content} strings)" });
          continue;
        }
        const item = turnItem(value.role, value.content, clock, { file, line }, read.problems);
        if (item) items.push(item);
      }
      read.sessions.push(
        withOrigin(
          keyedSession(keyFromStem(stem), agent, `zeroclaw:jsonl:${stem}`, file, items, false),
          originOfKey(stem, agent),
        ),
      );
    }
  }
  return read;
}

const ZEROCLAW_DEFAULT_AGENT = "default";
const USER_STAMP = /^\[(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2}) ([^\]]*)\] /;

/**
 * One ZeroClaw turn as an item. `clock` carries the last known time forward: only user turns (their
 * prefix) and database rows have one, and the replies that follow them happened after it.
 */
export function turnItem(
  role: string,
  content: string,
  clock: { ts: number | undefined },
  where: Omit<ImportProblem, "reason">,
  problems: ImportProblem[],
): ImportItem | undefined {
  let text = content;
  if (role === "user") {
    const stamp = USER_STAMP.exec(content);
    if (stamp) {
      const zone = /^[+-]\d\d:?\d\d$/.test(stamp[3] ?? "") ? stamp[3] : "Z";
      clock.ts = timeOf(`${stamp[1]}T${stamp[2]}${zone}`) ?? clock.ts;
      text = content.slice(stamp[0].length);
    }
  }
  const ts = clock.ts !== undefined ? { ts: clock.ts } : {};
  // "[Session interrupted — …]" is an assistant message in ZeroClaw's history, replayed to the model: it
  // comes in as the message it is. "[No reply sent]" marks a turn with no reply: a note, as sessiond has
  // no empty reply.
  if (role === "assistant" && content === "[No reply sent]")
    return { kind: "entry", entry: { type: "note", text: content, code: "ZEROCLAW_NO_REPLY", ...ts } };
  const inner = role === "assistant" || role === "tool" ? jsonObject(content) : undefined;
  let read: ReturnType<typeof messageEntry>;
  if (role === "assistant" && inner && Array.isArray(inner.tool_calls)) {
    read = messageEntry("assistant", typeof inner.content === "string" ? inner.content : "", {
      ...ts,
      toolCalls: toolCallsOf(inner.tool_calls),
      parts: reasoningParts(inner.reasoning_content),
    });
  } else if (role === "tool" && inner && "tool_call_id" in inner) {
    const result = typeof inner.content === "string" ? inner.content : JSON.stringify(inner.content ?? "");
    read = messageEntry("tool", result, { ...ts, toolCallId: inner.tool_call_id });
  } else read = messageEntry(role, text, ts);
  if ("entry" in read) return { kind: "entry", entry: read.entry };
  problems.push({ ...where, reason: read.error });
  return undefined;
}

function jsonObject(text: string): Record<string, unknown> | undefined {
  if (!text.startsWith("{")) return undefined;
  // Content deeper than the cap is kept as the text it is, never parsed (a JSON bomb).
  const read = parseCappedJson(text, text.length, DEFAULT_IMPORT_LIMITS.jsonDepth);
  return "value" in read && isObject(read.value) ? read.value : undefined;
}

/**
 * The chat of a ZeroClaw key, where its shape can be read back: Telegram's `telegram_<chat>_<user>` and
 * `telegram_<chat>_<topic>_<topic>_<user>`. Other keys cannot be split (ids may hold `_`): undefined.
 */
function originOfKey(stem: string, agent: string): ChatOrigin | undefined {
  const tg = /^telegram_(-?\d+)_(?:(\d+)_\2_)?(.+)$/.exec(stem);
  if (!tg?.[1] || !tg[3]) return undefined;
  return {
    agent,
    channel: "telegram",
    chatType: tg[1].startsWith("-") ? "group" : "direct",
    chatId: tg[1],
    senderId: tg[3],
    ...(tg[2] ? { threadId: tg[2] } : {}),
  };
}

function withOrigin<T extends object>(session: T, origin: ChatOrigin | undefined): T {
  return origin ? { ...session, origin } : session;
}

interface MetadataRow {
  session_key: string;
  created_at: unknown;
  name: unknown;
  agent_alias: unknown;
  channel_id: unknown;
  room_id: unknown;
  sender_id: unknown;
}

function readDatabase(
  files: SourceFiles,
  file: string,
  agent: string,
  read: SourceRead,
  receipts: Set<string>,
): void {
  withDatabase(files, file, ["sessions"], "a ZeroClaw sessions.db", (db) => {
    const columns = columnsOf(db, "sessions");
    for (const c of ["id", "session_key", "role", "content", "created_at"]) {
      if (!columns.has(c)) {
        read.problems.push({ file, reason: `sessions has no ${c} column: not a ZeroClaw sessions.db` });
        return;
      }
    }
    if (hasTable(db, "jsonl_import_receipts")) {
      for (const row of db.prepare("SELECT source_name FROM jsonl_import_receipts").all() as Array<{
        source_name: unknown;
      }>)
        if (typeof row.source_name === "string") receipts.add(basename(row.source_name));
    }
    const meta = new Map<string, MetadataRow>();
    if (hasTable(db, "session_metadata")) {
      const have = columnsOf(db, "session_metadata");
      const col = (c: string) => (have.has(c) ? c : `NULL AS ${c}`);
      const rows = db
        .prepare(
          `SELECT session_key, ${["created_at", "name", "agent_alias", "channel_id", "room_id", "sender_id"].map(col).join(", ")} FROM session_metadata`,
        )
        .all() as MetadataRow[];
      for (const row of rows) meta.set(row.session_key, row);
    }
    const keys = db
      .prepare("SELECT DISTINCT session_key FROM sessions ORDER BY session_key")
      .pluck()
      .all() as string[];
    const rows = db.prepare(
      `SELECT id, role, ${cappedText("content", files.limits.lineBytes)}, created_at FROM sessions WHERE session_key = ? ORDER BY id`,
    );
    for (const rawKey of keys) {
      const items: ImportItem[] = [];
      const m = meta.get(rawKey);
      // ZeroClaw's own default agent is sessiond's default agent.
      const alias = typeof m?.agent_alias === "string" ? m.agent_alias : "";
      const sessionAgent = alias !== "" && alias !== ZEROCLAW_DEFAULT_AGENT ? alias : agent;
      if (typeof m?.name === "string" && m.name !== "")
        items.push({ kind: "entry", entry: { type: "title", title: m.name.slice(0, 200), by: "zeroclaw" } });
      else if (m && m.name !== null && m.name !== undefined)
        read.problems.push({ file, row: `session_metadata ${rawKey}`, reason: "name is not text; left out" });
      for (const row of rows.iterate(rawKey) as Iterable<{
        id: number;
        role: unknown;
        content: unknown;
        content_bytes: number;
        created_at: unknown;
      }>) {
        const where = { file, row: `sessions ${row.id}` };
        if (!rowWithinCaps(files, row.content_bytes, where)) continue;
        if (typeof row.role !== "string" || typeof row.content !== "string") {
          read.problems.push({ ...where, reason: "role or content is not text" });
          continue;
        }
        const clock = { ts: timeOf(row.created_at) };
        const item = turnItem(row.role, row.content, clock, where, read.problems);
        if (item) items.push(item);
      }
      const createdAt = timeOf(m?.created_at);
      const session = keyedSession(
        keyFromStem(rawKey),
        sessionAgent,
        `zeroclaw:db:${rawKey}`,
        file,
        items,
        false,
        createdAt,
      );
      const fromMeta = metadataOrigin(rawKey, m, sessionAgent);
      read.sessions.push({
        ...withOrigin(session, fromMeta?.origin ?? originOfKey(rawKey, sessionAgent)),
        ...(fromMeta?.assumed ? { assumed: [fromMeta.assumed] } : {}),
      });
    }
  });
}

/**
 * The chat from `session_metadata`: channel (`channel_id` less its `.alias`, else the key's first part),
 * room, sender. A channel alias is a second bot on the channel: sessiond's account. ZeroClaw records no
 * chat type: a negative Telegram chat id is a group; elsewhere a direct chat is assumed, and said.
 */
function metadataOrigin(
  rawKey: string,
  m: MetadataRow | undefined,
  agent: string,
): { origin: ChatOrigin; assumed?: string } | undefined {
  if (!m || typeof m.room_id !== "string" || typeof m.sender_id !== "string") return undefined;
  const [named = "", alias] = typeof m.channel_id === "string" ? m.channel_id.split(".") : [];
  const channel = named !== "" ? named : (rawKey.split("_")[0] ?? "");
  if (channel === "") return undefined;
  const [room = m.room_id, thread] = m.room_id.split(":");
  const telegram = channel === "telegram";
  return {
    origin: {
      agent,
      channel,
      chatType: telegram && room.startsWith("-") ? "group" : "direct",
      chatId: room,
      senderId: m.sender_id,
      ...(thread ? { threadId: thread } : {}),
      ...(alias ? { account: alias } : {}),
    },
    ...(telegram
      ? {}
      : {
          assumed: `ZeroClaw records no chat type for ${channel} room ${room}; a direct chat with ${m.sender_id} is assumed`,
        }),
  };
}
