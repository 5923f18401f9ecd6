import { basename, join } from "node:path";
import type { ResetCause } from "../../model/entry.js";
import { entryBody } from "../../model/entry.js";
import type { ChatType } from "../../model/envelope.js";
import { parseStem, stemOf } from "../../store/jsonl/file-names.js";
import { parseSessionFile } from "../../store/jsonl/session-file.js";
import { screenLines } from "../jsonl-lines.js";
import { isObject, messageEntry, reasoningParts, timeOf, toolCallsOf } from "../messages.js";
import type { SourceFiles } from "../source-files.js";
import type { ChatOrigin, ImportItem, ImportProblem, SourceRead, SourceSession } from "../types.js";
import { emptyRead } from "../types.js";
import { jsonlNames, sessionsDir } from "./dir-files.js";

/** CrabTalk's default agent: imported as the agent sessiond routes to by default. */
const CRABTALK_DEFAULT_AGENT = "crab";
const CHAT_TYPES = new Set(["direct", "group", "channel", "thread"]);

/**
 * A CrabTalk session directory (peer-formats §2). Files CrabTalk wrote are read line by line as CrabTalk
 * reads them: v0.0.19's flat `{role, content, tool_calls, tool_call_id, name, reasoning_content, agent}`
 * lines and v0.0.20's `{agent?, message: {…}}` lines (events skipped), compact markers (`archived_at` is
 * their time), the metadata title; the files of one `(agent, created_by)` are its generations in seq
 * order, the last one current. Files sessiond's JSONL store wrote are read by the store's own parser.
 */
export function readCrabtalk(files: SourceFiles, path: string, agent: string): SourceRead {
  const read = emptyRead(files.problems, files.leftOut);
  const dir = sessionsDir(files, path);
  const byKey = new Map<string, Array<SourceSession & { order: number }>>();
  for (const name of jsonlNames(files, dir)) {
    const file = join(dir, name);
    try {
      const source = readFile(files, file, name, agent);
      if (source) byKey.set(source.key, [...(byKey.get(source.key) ?? []), source]);
    } catch (error) {
      read.problems.push({ file, reason: `cannot read: ${(error as Error).message}` });
    }
  }
  for (const list of byKey.values()) {
    list.sort((a, b) => a.order - b.order);
    list.forEach((s, i) => {
      const { order: _order, ...session } = s;
      read.sessions.push({ ...session, archived: session.archived || i < list.length - 1 });
    });
  }
  return read;
}

function readFile(
  files: SourceFiles,
  file: string,
  name: string,
  defaultAgent: string,
): (SourceSession & { order: number }) | undefined {
  const { problems } = files;
  const read = files.read(file);
  if (!read) return undefined;
  const bytes = screenLines(files, file, read);
  const { parsed, problems: found } = parseSessionFile(name, bytes);
  for (const p of found) if (!parsed?.foreign) problems.push({ file, line: p.line, reason: p.reason });
  if (!parsed) return undefined;
  // The store's parser leaves out a metadata field of the wrong type and reports it; for a file CrabTalk
  // wrote its reports are not passed on (it reads CrabTalk's lines its own way), so the raw line is checked.
  const meta =
    (parsed.foreign ? firstLineObject(bytes) : undefined) ??
    (parsed.meta as unknown as Record<string, unknown>);
  const title = checkedField(meta, "title", "string", file, problems);
  const seq = parseStem(stemOf(name))?.seq ?? 0;
  if (parsed.foreign) return { ...foreignSession(files, file, bytes, meta, title, defaultAgent), order: seq };

  const chatType = checkedField(meta, "chat_type", "string", file, problems);
  const channel = checkedField(meta, "channel", "string", file, problems);
  const items: ImportItem[] = [];
  const indexOfSeq = new Map<number, number>();
  let closed: ResetCause | undefined;
  // CrabTalk keeps the title on the metadata line; sessiond keeps titles as entries.
  if (title && !parsed.entries.some((e) => e.type === "title")) {
    items.push(titleItem(title, parsed.session.createdAt));
  }
  for (const entry of parsed.entries) {
    indexOfSeq.set(entry.seq, items.length);
    const body = entryBody(entry);
    if (body.type === "reset") {
      closed = body.cause;
      continue;
    }
    if (body.type === "compaction") {
      const keepFrom = indexOfSeq.get(body.firstKeptSeq);
      items.push({
        kind: "compaction",
        summary: body.summary,
        ts: entry.ts,
        tokensBefore: body.tokensBefore,
        tokensAfter: body.tokensAfter,
        summarizer: body.summarizer,
        ...(body.model !== undefined ? { model: body.model } : {}),
        ...(keepFrom !== undefined ? { keepFrom } : {}),
      });
      continue;
    }
    items.push({ kind: "entry", entry: { ...body, ts: entry.ts } });
  }
  const { session } = parsed;
  return {
    key: session.key,
    init: {
      agent: session.agent,
      channel: channel ?? "crabtalk",
      createdBy: session.createdBy,
      ...(chatType && CHAT_TYPES.has(chatType) ? { chatType: chatType as ChatType } : {}),
    },
    sourceId: `crabtalk:${session.id}`,
    ownKey: true,
    file,
    items,
    archived: closed !== undefined,
    ...(closed !== undefined ? { resetCause: closed } : {}),
    createdAt: session.createdAt,
    order: session.generation * 1e9 + seq,
  };
}

function firstLineObject(bytes: Buffer): Record<string, unknown> | undefined {
  const end = bytes.indexOf(10);
  try {
    const value: unknown = JSON.parse(bytes.subarray(0, end < 0 ? bytes.length : end).toString("utf8"));
    return isObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** A metadata field of the expected type, else undefined; a present field of another type is a problem. */
function checkedField(
  meta: Record<string, unknown>,
  field: string,
  type: "string",
  file: string,
  problems: ImportProblem[],
): string | undefined {
  const value = meta[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value === type) return value as string;
  problems.push({
    file,
    line: 1,
    reason: `metadata ${field} is not a ${type} (${JSON.stringify(value)}); left out`,
  });
  return undefined;
}

function titleItem(title: string, ts: number | undefined): ImportItem {
  return {
    kind: "entry",
    entry: { type: "title", title: title.slice(0, 200), by: "crabtalk", ...(ts !== undefined ? { ts } : {}) },
  };
}

function foreignSession(
  files: SourceFiles,
  file: string,
  bytes: Buffer,
  meta: Record<string, unknown>,
  title: string | undefined,
  defaultAgent: string,
): SourceSession {
  const { problems } = files;
  const agentName = String(meta.agent);
  const createdBy = String(meta.created_by);
  const agent = agentName === CRABTALK_DEFAULT_AGENT ? defaultAgent : agentName;
  const lastPersist = timeOf(meta.created_at);
  const items: ImportItem[] = [];
  // Message lines carry no time: each gets the next real time after it (an event's `ts`, a marker's
  // `archived_at`), else the last persist time on the metadata line.
  const times: Array<number | undefined> = [];
  let events = 0;
  const lines = bytes.toString("utf8").split("\n");
  for (let i = 1; i < lines.length; i++) {
    const text = lines[i] ?? "";
    if (text.trim() === "") continue;
    const where = { file, line: i + 1 };
    const before = problems.length;
    const value = files.json(text, where);
    if (!isObject(value)) {
      if (problems.length === before) problems.push({ ...where, reason: "not a JSON object" });
      else if (i === lines.length - 1 && problems.at(-1)?.reason === "not JSON")
        problems.splice(-1, 1, { ...where, reason: "torn last line" });
      continue;
    }
    if (typeof value.compact === "string") {
      const ts = timeOf(value.archived_at);
      items.push({ kind: "compaction", summary: value.compact, ...(ts !== undefined ? { ts } : {}) });
      times.push(ts);
      continue;
    }
    if (typeof value.event === "string") {
      // Run events (tool timings, usage): no history, but a real time for the messages before them.
      const ts = timeOf(value.ts);
      if (ts !== undefined) times[items.length - 1] ??= ts;
      events++;
      continue;
    }
    const message = isObject(value.message) ? value.message : value;
    const guest = typeof value.agent === "string" && value.agent !== "" ? value.agent : undefined;
    const item = crabtalkMessage(message, guest, where, problems);
    if (item) {
      items.push(item);
      times.push(undefined);
    }
  }
  // The last persist time dates the messages after the last real time only if it is not before it (a
  // marker's archived_at can be later); otherwise they take the time before them (placeByTime).
  const latest = Math.max(...times.map((t) => t ?? Number.NEGATIVE_INFINITY));
  if (events > 0)
    files.leftOut.push({
      file,
      reason: `${events} event lines (run timings, usage): no history; their times date the messages`,
    });
  let next = lastPersist !== undefined && lastPersist >= latest ? lastPersist : undefined;
  for (let i = items.length - 1; i >= 0; i--) {
    next = times[i] ?? next;
    const item = items[i];
    if (item?.kind === "entry" && next !== undefined) item.entry.ts = next;
  }
  // CrabTalk records no time for its title (created_at is the last persist): it comes after the messages.
  if (title) items.push(titleItem(title, undefined));
  return {
    key: `${agentName}:${createdBy}`,
    init: { agent, channel: "crabtalk", createdBy },
    ...withOrigin(originOf(agent, createdBy)),
    // The untitled stem: stable across CrabTalk's title rename and its metadata rewrites.
    sourceId: `crabtalk:${stemOf(basename(file))}`,
    file,
    items,
    archived: false,
    // No start time: CrabTalk's created_at is the last persist, so the first message's time stands for it.
  };
}

function crabtalkMessage(
  m: Record<string, unknown>,
  guest: string | undefined,
  where: { file: string; line: number },
  problems: ImportProblem[],
): ImportItem | undefined {
  if (typeof m.role !== "string") {
    problems.push({ ...where, reason: "neither a message nor a compact marker" });
    return undefined;
  }
  const role = m.role === "developer" ? "system" : m.role;
  const read = messageEntry(role, m.content ?? "", {
    toolCalls: toolCallsOf(m.tool_calls),
    toolCallId: m.tool_call_id,
    parts: [
      ...reasoningParts(m.reasoning_content),
      ...(role === "tool" && typeof m.name === "string" && m.name !== ""
        ? [{ kind: "tool", name: m.name }]
        : []),
    ],
  });
  if ("error" in read) {
    problems.push({ ...where, reason: read.error });
    return undefined;
  }
  const entry = read.entry;
  // A guest agent's reply: who spoke is kept as the message's sender.
  if (guest && entry.type === "message") entry.sender = { id: guest, name: guest };
  return { kind: "entry", entry };
}

function withOrigin(origin: ChatOrigin | undefined): { origin?: ChatOrigin } {
  return origin ? { origin } : {};
}

/** The chat a CrabTalk sender names: `tg:<id>` is Telegram; the local owner `user` and others have none. */
function originOf(agent: string, createdBy: string): ChatOrigin | undefined {
  const tg = /^tg:(.+)$/i.exec(createdBy);
  if (!tg?.[1]) return undefined;
  return { agent, channel: "telegram", chatType: "direct", chatId: tg[1], senderId: tg[1] };
}
