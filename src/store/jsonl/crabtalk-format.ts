import { createHash } from "node:crypto";
import type { Entry, EntryBody, MessageEntry, Role } from "../../model/entry.js";
import type { Session } from "../../model/session.js";
import type { KeyedSession } from "../encryption/data-keys.js";
import { CRABTALK_FIELDS, callNames, crabtalkFields, fromCrabtalkFields } from "./crabtalk-fields.js";
import { fileFamily } from "./file-names.js";
import { encodeLine, jsonFields, jsonString } from "./json-line.js";

/**
 * CrabTalk's session file, one JSON object per line (behaviours.md §2): a metadata line, then
 * `{"role","content"}` per message and `{"compact": summary}` per compaction. sessiond's own fields ride
 * along as extra JSON fields, which CrabTalk ignores; entries CrabTalk has no line for carry a `type`
 * field and no `role`, so CrabTalk skips them as lines that do not parse as messages.
 * This is the one encoder: the JSONL store and `sessions export --format jsonl` both write through it.
 */

/** The first line of a session file. `title` stays as created: the metadata line is never rewritten. */
export interface MetadataLine {
  agent: string;
  created_by: string;
  created_at: string;
  title: string;
  uptime_secs: number;
  /** sessiond's fields; absent in files CrabTalk wrote. */
  key?: string;
  /** The session's `createdBy`, where `created_by` is its file family's sender instead (see `fileFamily`). */
  sender?: string;
  session_id?: string;
  generation?: number;
  channel?: string;
  chat_type?: string;
  /** A fork's (or a rewound generation's) origin, and what its first `seq` entries hold (fork-facts.ts). */
  forked_from?: ForkedFromField;
  /** The session's data key, wrapped, when the store is encrypted (src/store/encryption/). */
  data_key?: string;
}

/** The metadata line's `forked_from`: the entries before the file's first are that session's. */
export interface ForkedFromField {
  key: string;
  session_id: string;
  seq: number;
  message_count: number;
  approx_tokens: number;
  context_from_seq: number;
  last_compaction_seq?: number;
}

export function metadataLine(session: Session, extra: Record<string, unknown> = {}): MetadataLine {
  const { sender } = fileFamily(session.agent, session.createdBy, session.key);
  return {
    agent: session.agent,
    created_by: sender,
    created_at: new Date(session.createdAt).toISOString(),
    title: session.title,
    uptime_secs: Math.max(0, Math.floor((session.lastActivityAt - session.createdAt) / 1000)),
    key: session.key,
    ...(sender !== session.createdBy ? { sender: session.createdBy } : {}),
    session_id: session.id,
    generation: session.generation,
    channel: session.channel,
    ...(session.chatType !== undefined ? { chat_type: session.chatType } : {}),
    ...(session.forkedFrom ? { forked_from: forkedFromField(session) } : {}),
    ...((session as KeyedSession).dataKey ? { data_key: (session as KeyedSession).dataKey } : {}),
    ...extra,
  };
}

/**
 * What a fork's file says of its origin, written when the file is created: the session's counts are then
 * those of the inherited entries alone (its own are folded in when the file is read).
 */
function forkedFromField(session: Session): ForkedFromField {
  const origin = session.forkedFrom!;
  return {
    key: origin.key,
    session_id: origin.sessionId,
    seq: origin.seq,
    message_count: session.messageCount,
    approx_tokens: session.approxTokens,
    context_from_seq: session.contextFromSeq,
    ...(session.lastCompactionSeq === undefined ? {} : { last_compaction_seq: session.lastCompactionSeq }),
  };
}

const HEADER_FIELDS = ["id", "sessionId", "seq", "ts", "idempotencyKey"];
/** The fields a line writes before its header, under CrabTalk's names, or leaves out (`type`). */
const WRITTEN_FIRST = {
  message: new Set([...HEADER_FIELDS, "type", "role", "content"]),
  compaction: new Set([...HEADER_FIELDS, "type", "summary"]),
  other: new Set(HEADER_FIELDS),
};

/**
 * One entry's line: `{"role","content"}` or `{"compact"}` first for CrabTalk, then sessiond's header
 * (seq, id, ts, and the idempotency key), then the entry's other fields; other kinds of entry keep their
 * fields (`type` first) and the header follows. `withSessionId` for files that hold several sessions
 * (exports). Written field by field: a line is built for every append.
 */
export function encodeEntry(entry: Entry, withSessionId = false, callName?: string): string {
  let header = `,"seq":${entry.seq},"id":${jsonString(entry.id)},"ts":${entry.ts}`;
  if (withSessionId) header += `,"sessionId":${jsonString(entry.sessionId)}`;
  if (entry.idempotencyKey !== undefined) header += `,"idempotencyKey":${jsonString(entry.idempotencyKey)}`;
  switch (entry.type) {
    case "message":
      return `{"role":${jsonString(entry.role)},"content":${jsonString(entry.content)}${jsonFields(crabtalkFields(entry, callName))}${header}${jsonFields(entry, WRITTEN_FIRST.message)}}\n`;
    case "compaction":
      return `{"compact":${jsonString(entry.summary)}${header}${jsonFields(entry, WRITTEN_FIRST.compaction)}}\n`;
    default:
      return `{${`${jsonFields(entry, WRITTEN_FIRST.other)}${header}`.slice(1)}}\n`;
  }
}

/**
 * The lines of one entry. After a compaction marker, the messages it keeps from before it (found in
 * `earlier`, the session's entries so far) are written again, marked `kept`, so that a CrabTalk reader
 * (which loads from the last marker) sees the context sessiond does; sessiond skips those copies. A kept
 * tool result whose call is not kept too is left out of the copies: CrabTalk's context never starts with
 * an orphan `tool` message. `earlier` also names the call a tool result answers (CrabTalk's `name`).
 */
export function entryLines(entry: Entry, earlier: readonly Entry[], withSessionId = false): string[] {
  if (entry.type === "message" && entry.role === "tool" && entry.toolCallId) {
    const name = callNames(earlier.filter((e) => e.sessionId === entry.sessionId)).get(entry.toolCallId);
    return [encodeEntry(entry, withSessionId, name)];
  }
  const lines = [encodeEntry(entry, withSessionId)];
  if (entry.type !== "compaction") return lines;
  const kept = earlier.filter(
    (e) =>
      e.sessionId === entry.sessionId &&
      e.type === "message" &&
      e.seq >= entry.firstKeptSeq &&
      e.seq < entry.seq,
  ) as MessageEntry[];
  const names = callNames(kept);
  for (const message of kept) {
    const callName = message.toolCallId === undefined ? undefined : names.get(message.toolCallId);
    if (message.role === "tool" && message.toolCallId && callName === undefined) continue;
    const { role, content } = message;
    lines.push(encodeLine({ role, content, ...crabtalkFields(message, callName), kept: message.seq }));
  }
  return lines;
}

/** What one line of a session file holds once decoded. */
export type DecodedLine =
  | { kind: "entry"; seq: number; id: string; ts: number; idempotencyKey?: string; body: EntryBody }
  /** A CrabTalk line with no sessiond fields: numbered by position when read. */
  | { kind: "foreign-message"; role: Role; content: string; fields: ReturnType<typeof fromCrabtalkFields> }
  | { kind: "foreign-compact"; summary: string }
  | { kind: "kept-copy" }
  | { kind: "invalid"; reason: string };

const ROLES = new Set<Role>(["user", "assistant", "system", "tool"]);
const ENTRY_TYPES = new Set(["title", "note", "usage", "reset"]);

export function isMetadataLine(value: unknown): value is MetadataLine {
  if (!isObject(value)) return false;
  return typeof value.agent === "string" && typeof value.created_by === "string" && !("role" in value);
}

export function decodeLine(text: string): DecodedLine {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { kind: "invalid", reason: "not JSON" };
  }
  if (!isObject(value)) return { kind: "invalid", reason: "not a JSON object" };
  if (typeof value.kept === "number") return { kind: "kept-copy" };
  const { seq, id, ts, idempotencyKey, sessionId: _sid, ...rest } = value;
  const ours = typeof seq === "number" && typeof id === "string" && typeof ts === "number";
  if (!ours && seq !== undefined)
    return { kind: "invalid", reason: "sessiond's fields (seq, id, ts) are incomplete or of the wrong type" };
  if (typeof rest.compact === "string") {
    const { compact, ...fields } = rest;
    if (!ours) return { kind: "foreign-compact", summary: compact };
    return header({ type: "compaction", summary: compact, ...fields } as EntryBody);
  }
  // CrabTalk leaves out an empty `content` (an assistant line with only `tool_calls`); sessiond always writes it.
  if (typeof rest.role === "string" && ("content" in rest || !ours) && rest.type === undefined) {
    const role = rest.role as Role;
    if (!ROLES.has(role)) return { kind: "invalid", reason: `unknown role ${JSON.stringify(rest.role)}` };
    if (ours) {
      for (const field of CRABTALK_FIELDS) delete rest[field];
      return header({ type: "message", ...rest } as EntryBody);
    }
    const content =
      typeof rest.content === "string"
        ? rest.content
        : rest.content == null
          ? ""
          : JSON.stringify(rest.content);
    return { kind: "foreign-message", role, content, fields: fromCrabtalkFields(rest) };
  }
  if (ours && typeof rest.type === "string" && ENTRY_TYPES.has(rest.type))
    return header(rest as unknown as EntryBody);
  return { kind: "invalid", reason: "neither a message, a compact marker nor a sessiond entry" };

  function header(body: EntryBody): DecodedLine {
    const line: DecodedLine = { kind: "entry", seq: seq as number, id: id as string, ts: ts as number, body };
    if (typeof idempotencyKey === "string") line.idempotencyKey = idempotencyKey;
    return line;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/**
 * A ULID that is the same every time it is derived from the same time and seed: ids for sessions and
 * entries of files CrabTalk wrote, which carry none, stay stable across loads.
 */
export function derivedUlid(time: number, seed: string): string {
  let out = "";
  let t = Math.max(0, Math.min(Math.floor(time), 2 ** 48 - 1));
  for (let i = 0; i < 10; i++) {
    out = CROCKFORD[t % 32] + out;
    t = Math.floor(t / 32);
  }
  const hash = createHash("sha256").update(seed, "utf8").digest();
  for (let i = 0; i < 16; i++) out += CROCKFORD[(hash[i] ?? 0) % 32];
  return out;
}
