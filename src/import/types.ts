import type { EntryInput, ResetCause } from "../model/entry.js";
import type { ChatType } from "../model/envelope.js";
import type { SessionInit } from "../model/session.js";

export const IMPORT_SOURCES = ["crabtalk", "zeroclaw", "openclaw", "nanobot", "picoclaw"] as const;
export type ImportSource = (typeof IMPORT_SOURCES)[number];

/** A line or row that could not be read: where it is, and why. The rest of the source still comes in. */
export interface ImportProblem {
  file: string;
  /** 1-based line of a JSONL file. */
  line?: number;
  /** A SQLite row: `<table> <id>`. */
  row?: string;
  reason: string;
}

/**
 * One item of a source session, in order. A compaction names the first item it keeps (by index into
 * the same list), or keeps everything after itself; seqs are worked out when the session is written.
 */
export type ImportItem =
  | { kind: "entry"; entry: EntryInput }
  | {
      kind: "compaction";
      summary: string;
      ts?: number;
      keepFrom?: number;
      tokensBefore?: number;
      /** As sessiond recorded them (a file its JSONL store wrote); else the source's name and an estimate. */
      tokensAfter?: number;
      summarizer?: string;
      model?: string;
    };

/**
 * The chat a source session belongs to, as sessiond's router sees an inbound message: the importer routes
 * it so the imported session lands on the key the next message from that chat goes to.
 */
export interface ChatOrigin {
  agent: string;
  channel: string;
  chatType: ChatType;
  chatId: string;
  /** Absent when the peer's data does not say who wrote (a shared channel session): the route says what it assumed. */
  senderId?: string;
  threadId?: string;
  account?: string;
  /** The peer's one session for all of the agent's direct chats (OpenClaw's and PicoClaw's `main`). */
  sharedMain?: boolean;
}

/** One session (one generation) of another system, ready to be written to a sessiond store. */
export interface SourceSession {
  /** The key when `origin` is absent or cannot be routed (the source's own key, made a sessiond key). */
  key: string;
  origin?: ChatOrigin;
  init: SessionInit;
  /** Stable across reads of the same source: makes a second import add nothing. */
  sourceId: string;
  /** Where it was read from, for reports. */
  file: string;
  items: ImportItem[];
  /** Whether the source system considers it closed (an earlier generation of its key). */
  archived: boolean;
  createdAt?: number;
  /** Why the source closed it, where it says (a reset entry sessiond wrote); else `manual`. */
  resetCause?: ResetCause;
  /** What the reader had to assume about the chat (a chat type or account the data does not record). */
  assumed?: string[];
  /** The key is sessiond's own (a file sessiond's JSONL store wrote): nothing to route. */
  ownKey?: boolean;
}

export interface SourceRead {
  sessions: SourceSession[];
  problems: ImportProblem[];
  /** What the peer stored that does not come in, and why: nothing is left out without a line here. */
  leftOut?: ImportProblem[];
}

/** A read whose problems are the source folder's own list (refused files, lines over a cap). */
export function emptyRead(problems: ImportProblem[] = [], leftOut: ImportProblem[] = []): SourceRead {
  return { sessions: [], problems, leftOut };
}
