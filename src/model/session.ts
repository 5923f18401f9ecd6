import type { CompactionEntry, Entry } from "./entry.js";
import type { ChatType } from "./envelope.js";

export type SessionState = "active" | "archived";
export type OverrideValue = string | number | boolean;

/** What a new session of a key is created with. */
export interface SessionInit {
  agent: string;
  channel: string;
  chatType?: ChatType;
  /** The sender (or API user) whose message created the session. */
  createdBy: string;
  /**
   * When the session began, if before its first entry and before now (an imported session's start, as
   * the other system recorded it). Only read when the session is created.
   */
  createdAt?: number;
}

/**
 * Where a session took its history from: the first `seq` entries of session `sessionId` (of key `key`,
 * as it was named when the session began). A fork and a rewound generation reference that prefix instead
 * of copying it; their own entries are numbered from `seq + 1`.
 */
export interface ForkOrigin {
  key: string;
  sessionId: string;
  seq: number;
}

/** One history generation of a key. A reset archives it and starts the next generation. */
export interface Session extends SessionInit {
  /** ULID of this generation. */
  id: string;
  key: string;
  /** 1 for the first session of a key, then +1 per reset. */
  generation: number;
  state: SessionState;
  title: string;
  createdAt: number;
  lastActivityAt: number;
  archivedAt?: number;
  /** The seq of the last entry (entries are numbered 1..entryCount). */
  entryCount: number;
  messageCount: number;
  /** Estimated tokens of all messages ever appended (bytes / 4). */
  approxTokens: number;
  /** The first seq that context is loaded from: set by the latest compaction. */
  contextFromSeq: number;
  lastCompactionSeq?: number;
  overrides: Record<string, OverrideValue>;
  /**
   * Set on a fork or a rewound generation: its entries 1..`forkedFrom.seq` are that session's, read
   * through it (and its own origin, and so on); its own entries follow.
   */
  forkedFrom?: ForkOrigin;
}

/** What the store returns for a turn's context: O(kept entries), never the whole history. */
export interface StoredContext {
  session: Session;
  /** The latest compaction, whose summary stands for everything before `contextFromSeq`. */
  summary?: Readonly<CompactionEntry>;
  /**
   * Entries from `contextFromSeq` on, compaction entries excluded, in seq order. The array is the caller's
   * own; the entries may be the ones a store caches, frozen (deeply).
   */
  entries: Readonly<Entry>[];
}
