import type { Envelope } from "./envelope.js";

/**
 * Where an admitted input is in its life: `pending` (stored, waiting for its turn), `running` (its turn
 * started), then exactly one end state — `done` (answered, or stored as context), `failed` (its turn threw),
 * `interrupted` (found unfinished at start-up past the configured age, so not run again), `cancelled` (by
 * an operator, before it ran) or `dropped` (by the queue's drop policy when the session's queue was full).
 */
export type InboxState = "pending" | "running" | "done" | "failed" | "interrupted" | "cancelled" | "dropped";

/** The end states: an item in one of them never runs again. */
export const FINISHED_STATES: ReadonlySet<InboxState> = new Set([
  "done",
  "failed",
  "interrupted",
  "cancelled",
  "dropped",
]);

/** What became of an input whose turn ended; kept with the item so an async turn's caller can read it. */
export interface InboxOutcome {
  /** The session (generation) id the turn ran in. */
  sessionId?: string;
  /** The stored reply's entry id and text, when there is one. */
  replyId?: string;
  reply?: string;
  /** Text for the user when there was no reply (`Started a new session.`). */
  notice?: string;
  /** Why it failed, was interrupted, cancelled or dropped. */
  error?: { code: string; message: string };
}

/** One admitted input. */
export interface InboxItem {
  /** A ULID given at admission: the order of admission, and the async turn's id (`GET /api/turns/{id}`). */
  id: string;
  /** The session key the envelope routed to when it was admitted. */
  key: string;
  /** The input as received; JSON-safe (no functions, no undefined inside arrays). */
  envelope: Envelope;
  /**
   * The idempotency key: the platform message id, scoped by channel (and bot account) by the caller. A
   * second admission with the same key finds this item instead of storing another.
   */
  dedupeKey?: string;
  state: InboxState;
  /** Engine-clock milliseconds. */
  admittedAt: number;
  updatedAt: number;
  outcome?: InboxOutcome;
  /** The process this item was just taken over from (a shared inbox's `takeOver`): its owner id. */
  takenFrom?: string;
}

export interface AdmitInput {
  /** The item's id when the caller chose it (a ULID from `newId(at)`); default: a new one. */
  id?: string;
  key: string;
  envelope: Envelope;
  dedupeKey?: string;
  /** Engine-clock milliseconds; becomes `admittedAt` and `updatedAt`. */
  at: number;
}

export interface AdmitResult {
  item: InboxItem;
  /** False when an item with the same `dedupeKey` was already there: `item` is that one, unchanged. */
  admitted: boolean;
}

/**
 * The durable queue of admitted inputs, beside (never inside) the session store: memory, SQLite (its own
 * table in the store's database file), JSONL (an fsynced append-only file under `.sessiond/`), PostgreSQL.
 * Every method's promise resolves only once its change is durable for that backend (memory: at once).
 * Implementations keep their own order of admission; the engine runs each key's items in that order.
 */
export interface Inbox {
  /** `memory`, `sqlite`, `jsonl`, `postgres`: shown by `GET /api/inspect`. */
  readonly backend: string;
  /**
   * Stores the input as `pending` before the caller acknowledges it. Idempotent on `dedupeKey`: when an
   * item with that key exists (in any state), resolves with it and `admitted: false`, storing nothing.
   * Rejects with `INVALID_ARGUMENT` for an envelope that cannot be stored as JSON.
   */
  admit(input: AdmitInput): Promise<AdmitResult>;
  /**
   * Moves an item to `state` (a later state only: `pending` → `running` → an end state, or `pending`
   * straight to an end state), with its outcome for the end states. Moving a finished item, or one that
   * does not exist, resolves with false and changes nothing; true when the change was stored.
   */
  transition(id: string, state: InboxState, at: number, outcome?: InboxOutcome): Promise<boolean>;
  /** One item by id, in whatever state; undefined when unknown or pruned. */
  get(id: string): Promise<InboxItem | undefined>;
  /** Every item still `pending` or `running`, in admission order: what start-up recovers. */
  unfinished(): Promise<InboxItem[]>;
  /** Forgets finished items last updated before `before` (so the inbox stays bounded); how many went. */
  prune(before: number): Promise<number>;
  /** Flushes and releases the backend's resources; later calls reject with `STORE_CLOSED`. */
  close(): Promise<void>;
}

/**
 * An inbox several processes share (PostgreSQL): each unfinished item is owned by the process that admitted
 * it or took it over, and only its owner moves it on (`transition` resolves false for another's). A process
 * is alive while it renews its heartbeat; the items of one whose heartbeat lapsed are orphans.
 */
export interface SharedInbox extends Inbox {
  readonly shared: true;
  /**
   * Makes this process the owner of every orphaned item, in one transaction, so that each goes to exactly
   * one process; resolves with them in admission order. Items of live processes are never taken.
   */
  takeOver(): Promise<InboxItem[]>;
  /**
   * Marks the items `running` when this process still owns every one of them (and then only): false when
   * another process took one over while this one was paused; the batch must not run here.
   */
  start(ids: readonly string[], at: number): Promise<boolean>;
  /** Calls `listener` after each heartbeat with whether some item now has no live owner. */
  onHeartbeat(listener: (orphans: boolean) => void): () => void;
}

export function isSharedInbox(inbox: Inbox): inbox is SharedInbox {
  return (inbox as Partial<SharedInbox>).shared === true;
}

/** Whether an item may move from `from` to `to`: forward only, and never out of an end state. */
export function canTransition(from: InboxState, to: InboxState): boolean {
  if (FINISHED_STATES.has(from) || from === to) return false;
  if (to === "pending") return false;
  return !(from === "running" && to === "running");
}
