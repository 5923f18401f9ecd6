import type { CompactionEntry, Entry, MessageEntry, ToolCall } from "../model/entry.js";
import type { Session } from "../model/session.js";

/** What a turn's runner gets: the session's context and the input it answers. */
export interface TurnContext {
  key: string;
  session: Session;
  /** The latest compaction, standing for everything before `entries`. */
  summary?: CompactionEntry;
  /** The kept entries, the input last. */
  entries: Entry[];
  input: MessageEntry;
  signal: AbortSignal;
}

export interface TurnReply {
  content: string;
  toolCalls?: ToolCall[];
  usage?: { model?: string; inputTokens?: number; outputTokens?: number; costUsd?: number };
}

/** Produces the reply for one turn; runtimes come later, any async function will do. */
export type TurnRunner = (context: TurnContext) => Promise<TurnReply | string>;

export interface TurnResult {
  key: string;
  sessionId: string;
  input: MessageEntry;
  reply: MessageEntry;
  /** True when the input was a redelivery (same platform message id) already answered: nothing ran. */
  deduplicated: boolean;
}

export interface TurnOptions {
  signal?: AbortSignal;
}
