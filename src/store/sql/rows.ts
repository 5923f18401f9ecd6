import type { Entry, EntryBody } from "../../model/entry.js";
import { entryBody, makeEntry } from "../../model/entry.js";
import type { ChatType } from "../../model/envelope.js";
import type { Session } from "../../model/session.js";
import type { KeyedSession } from "../encryption/data-keys.js";

export interface SessionRow {
  sid: number;
  id: string;
  key: string;
  generation: number;
  state: "active" | "archived";
  agent: string;
  channel: string;
  chat_type: string | null;
  created_by: string;
  title: string;
  created_at: number;
  last_activity_at: number;
  archived_at: number | null;
  entry_count: number;
  message_count: number;
  approx_tokens: number;
  context_from_seq: number;
  last_compaction_seq: number | null;
  overrides: string;
  fork_of?: string | null;
  fork_key?: string | null;
  fork_seq?: number | null;
  /** The session's data key, wrapped, when the store is encrypted (encryption/data-keys.ts). */
  data_key?: string | null;
}

export interface EntryRow {
  seq: number;
  id: string;
  ts: number;
  idem_key: string | null;
  data: string;
}

export function sessionFromRow(row: SessionRow): Session {
  const session: Session = {
    id: row.id,
    key: row.key,
    generation: row.generation,
    state: row.state,
    agent: row.agent,
    channel: row.channel,
    createdBy: row.created_by,
    title: row.title,
    createdAt: row.created_at,
    lastActivityAt: row.last_activity_at,
    entryCount: row.entry_count,
    messageCount: row.message_count,
    approxTokens: row.approx_tokens,
    contextFromSeq: row.context_from_seq,
    overrides: JSON.parse(row.overrides) as Session["overrides"],
  };
  if (row.chat_type !== null) session.chatType = row.chat_type as ChatType;
  if (row.archived_at !== null) session.archivedAt = row.archived_at;
  if (row.last_compaction_seq !== null) session.lastCompactionSeq = row.last_compaction_seq;
  if (row.fork_of != null && row.fork_key != null && row.fork_seq != null)
    session.forkedFrom = { key: row.fork_key, sessionId: row.fork_of, seq: Number(row.fork_seq) };
  if (row.data_key != null) (session as KeyedSession).dataKey = row.data_key;
  return session;
}

/** The mutable columns of a session row, in the order of the update statement. */
export function sessionUpdateParams(sid: number, s: Session): unknown[] {
  return [
    s.state,
    s.title,
    s.createdAt,
    s.lastActivityAt,
    s.archivedAt ?? null,
    s.entryCount,
    s.messageCount,
    s.approxTokens,
    s.contextFromSeq,
    s.lastCompactionSeq ?? null,
    JSON.stringify(s.overrides),
    sid,
  ];
}

/** The parameters of `updateAfterAppend`: the fields `foldEntry` changes. */
export function sessionAfterAppendParams(sid: number, s: Session): unknown[] {
  return [
    s.title,
    s.createdAt,
    s.lastActivityAt,
    s.entryCount,
    s.messageCount,
    s.approxTokens,
    s.contextFromSeq,
    s.lastCompactionSeq ?? null,
    sid,
  ];
}

export function sessionInsertParams(s: Session): unknown[] {
  return [
    s.id,
    s.key,
    s.generation,
    s.state,
    s.agent,
    s.channel,
    s.chatType ?? null,
    s.createdBy,
    s.title,
    s.createdAt,
    s.lastActivityAt,
    s.entryCount,
    s.messageCount,
    s.approxTokens,
    s.contextFromSeq,
    s.lastCompactionSeq ?? null,
    JSON.stringify(s.overrides),
    s.forkedFrom?.sessionId ?? null,
    s.forkedFrom?.key ?? null,
    s.forkedFrom?.seq ?? null,
    (s as KeyedSession).dataKey ?? null,
  ];
}

export function entryFromRow(sessionId: string, row: EntryRow): Entry {
  const header = {
    id: row.id,
    sessionId,
    seq: row.seq,
    ts: row.ts,
    idempotencyKey: row.idem_key ?? undefined,
  };
  return makeEntry(header, JSON.parse(row.data) as EntryBody);
}

export function entryInsertParams(sid: number, entry: Entry): unknown[] {
  return [
    sid,
    entry.seq,
    entry.id,
    entry.ts,
    entry.type,
    entry.idempotencyKey ?? null,
    JSON.stringify(entryBody(entry)),
  ];
}
