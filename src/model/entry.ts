import type { Part, Sender } from "./envelope.js";

export type EntryType = "message" | "compaction" | "reset" | "title" | "note" | "usage";
export type Role = "user" | "assistant" | "system" | "tool";
export type ResetCause = "trigger" | "daily" | "idle" | "manual" | "api" | "relink" | "client" | "rewind";

/** A tool call as kept in history: arguments already cut and stripped of credentials. */
export interface ToolCall {
  /** The runtime's call id, or `failed` for a call that failed. */
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}

interface EntryHeader {
  /** ULID, unique across the store. */
  id: string;
  sessionId: string;
  /** Position in the session's log: 1, 2, 3… with no gaps. */
  seq: number;
  /** Milliseconds since the epoch. */
  ts: number;
  /** A caller's key that makes the append idempotent within the session. */
  idempotencyKey?: string;
}

export interface MessageBody {
  type: "message";
  role: Role;
  content: string;
  sender?: Sender;
  parts?: Part[];
  toolCalls?: ToolCall[];
  /** The id of the entry this one answers. */
  replyTo?: string;
  /** On a `tool` message (a tool result, from imported histories): the call it answers. */
  toolCallId?: string;
  /** Set on context that hooks inject fresh for one turn; such messages are never stored. */
  autoInjected?: boolean;
}

/**
 * A summary of `fromSeq..throughSeq`. Context is loaded from `firstKeptSeq` onward, with this summary
 * in front. Nothing before it is deleted.
 */
export interface CompactionBody {
  type: "compaction";
  summary: string;
  fromSeq: number;
  throughSeq: number;
  firstKeptSeq: number;
  tokensBefore: number;
  tokensAfter: number;
  summarizer: string;
  model?: string;
}

export interface ResetBody {
  type: "reset";
  cause: ResetCause;
  /** The session that starts after this reset. */
  nextSessionId?: string;
}

export interface TitleBody {
  type: "title";
  title: string;
  by?: string;
}

export interface NoteBody {
  type: "note";
  text: string;
  level?: "info" | "warn" | "error";
  code?: string;
}

export interface UsageBody {
  type: "usage";
  model?: string;
  inputTokens?: number;
  outputTokens?: number;
  costUsd?: number;
}

export type EntryBody = MessageBody | CompactionBody | ResetBody | TitleBody | NoteBody | UsageBody;

/** What a caller appends: the body, and optionally its own timestamp and idempotency key. */
export type EntryInput = EntryBody & { ts?: number; idempotencyKey?: string };

export type MessageEntry = EntryHeader & MessageBody;
export type CompactionEntry = EntryHeader & CompactionBody;
export type ResetEntry = EntryHeader & ResetBody;
export type TitleEntry = EntryHeader & TitleBody;
export type NoteEntry = EntryHeader & NoteBody;
export type UsageEntry = EntryHeader & UsageBody;
export type Entry = MessageEntry | CompactionEntry | ResetEntry | TitleEntry | NoteEntry | UsageEntry;

/** The body of a stored entry, without its header: what a backend serialises. */
export function entryBody(entry: Entry): EntryBody {
  const { id: _id, sessionId: _s, seq: _q, ts: _t, idempotencyKey: _k, ...body } = entry;
  return body as EntryBody;
}

/**
 * The header and body joined into an entry. Takes ownership of `body` (it becomes the entry): building
 * a fresh object by spreading made entries slow for V8 to handle in bulk.
 */
export function makeEntry(header: EntryHeader, body: EntryBody): Entry {
  const entry = body as Entry;
  entry.id = header.id;
  entry.sessionId = header.sessionId;
  entry.seq = header.seq;
  entry.ts = header.ts;
  if (header.idempotencyKey !== undefined) entry.idempotencyKey = header.idempotencyKey;
  return entry;
}

/** A cheap token estimate (bytes / 4, rounded up), used where exact counts are not needed. */
export function estimateTokens(text: string): number {
  return Math.ceil(Buffer.byteLength(text, "utf8") / 4);
}

/** The text an entry contributes to a model's context, for token estimates. */
export function entryText(entry: EntryBody): string {
  switch (entry.type) {
    case "message":
      return entry.content;
    case "compaction":
      return entry.summary;
    default:
      return "";
  }
}
