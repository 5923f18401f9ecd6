import type { Entry, EntryInput, ResetCause, ResetEntry } from "../model/entry.js";
import type {
  ForkOrigin,
  OverrideValue,
  Session,
  SessionInit,
  SessionState,
  StoredContext,
} from "../model/session.js";
import type { InboxWrite } from "./driver.js";

export type Durability = "strict" | "relaxed";

export interface AppendResult {
  /** The session after the append. */
  session: Session;
  /** One entry per input, in order: the stored entry, or the earlier one an idempotency key matched. */
  entries: Entry[];
  /** `created[i]` is false where `entries[i]` was already there (same idempotency key). */
  created: boolean[];
}

export type SessionSort = "created" | "activity";

export interface SessionQuery {
  agent?: string;
  channel?: string;
  /** Only sessions with activity at or after this time (ms since epoch). */
  activeSince?: number;
  /** Include archived generations (default: only the current session of each key). */
  includeArchived?: boolean;
  /**
   * `created` (default): newest first by creation; stable while others write, since a session never moves.
   * `activity`: most recently active first; a session that gets activity while you page moves to the front.
   */
  sort?: SessionSort;
  /** 1..1000, default 50. */
  limit?: number;
  /** The `nextCursor` of the previous page. */
  cursor?: string;
}

export interface SessionPage {
  sessions: Session[];
  /** Absent on the last page. */
  nextCursor?: string;
}

export interface EntryRange {
  /** Only entries with seq > afterSeq. */
  afterSeq?: number;
  /** Only entries with seq < beforeSeq. */
  beforeSeq?: number;
  /** At most this many: the first ones for `asc`, the last ones for `desc`. */
  limit?: number;
  /** The order of the result; default `asc`. */
  order?: "asc" | "desc";
}

export interface SessionPatch {
  /** Set or replace overrides; a `null` value removes that override. */
  overrides?: Record<string, OverrideValue | null>;
}

export interface ArchiveResult {
  /** The generation that was archived, with the reset entry that closed it. */
  archived: Session;
  resetEntry: ResetEntry;
}

export interface ResetResult extends ArchiveResult {
  /** The next generation. */
  current: Session;
}

/** Sessions in time order for sweeps (scheduled resets, retention): served by an index, never a scan. */
export interface SessionScan {
  state: SessionState;
  /** Active sessions whose last activity is before this (ms since epoch). */
  inactiveBefore?: number;
  /** Archived sessions archived before this. */
  archivedBefore?: number;
  /** Only keys that start with this. */
  keyPrefix?: string;
  /** 1..10,000, default 1,000. */
  limit?: number;
  /** Continue after this session of the previous page (its time and id). */
  after?: { time: number; id: string };
}

export interface AppendOptions {
  /** How to create the key's session when it has none; without it, such an append fails (`INVALID_ARGUMENT`). */
  init?: SessionInit;
  /** Overrides the store's durability for this append: `relaxed` may be lost in a power cut until `sync()`. */
  durability?: Durability;
  /**
   * The session (generation) the entries were computed for: when the key's current session is another
   * one, or none (after a reset, relink, forget or retention run, in this process or another), the
   * append fails with `SESSION_CHANGED` and stores nothing; it never starts a session.
   */
  expectSessionId?: string;
  /**
   * Inbox writes that commit with the entries, made from what the append planned: a turn's end with its
   * reply. Only a store that keeps the inbox in its log (`inbox()` of SQLite and memory stores) takes it;
   * another refuses the append with `INVALID_ARGUMENT`.
   */
  inbox?: (appended: AppendResult) => InboxWrite[];
}

export interface ForkOptions {
  /** The entries `1..atSeq` of the key's current session are the fork's history; default: all of them. */
  atSeq?: number;
  /** The session to fork, when not the key's current one (an archived generation of the key). */
  sessionId?: string;
  /** The new session's key: one that has no session yet. */
  toKey: string;
}

export interface ForkResult {
  /** The new session: the current session of `toKey`, with `forkedFrom` set. */
  session: Session;
  forkedFrom: ForkOrigin;
}

export interface RewindOptions {
  /** The first entry left out: the conversation continues from the entry before it. */
  toSeq: number;
  /**
   * The seq of the newest entry the rewind was computed on (the session's `entryCount`): when the key's
   * current session has moved on (or is another one), the rewind fails with `SESSION_CHANGED`.
   */
  expectHead?: number;
  /** With `expectHead`: the session the head was read in. */
  expectSessionId?: string;
}

export interface RewindResult {
  /** The key's new current session: the entries before `toSeq`, then its own. */
  current: Session;
  /** The session rewound, archived (cause `rewind`) and still readable as a branch. */
  archived: Session;
  forkedFrom: ForkOrigin;
}

export interface DeleteResult {
  sessions: number;
  entries: number;
}

/**
 * What a store can do beyond `Store`, declared by the store rather than probed from its methods; each
 * capability names the member that provides it. A store of your own declares what it implements.
 */
export interface StoreCapabilities {
  /** `search(query, options)`: messages by their text (search/searchable.ts). */
  readonly search?: true;
  /** `inbox()`: the inbox of admitted inputs, kept by the store (model/inbox.ts). */
  readonly inbox?: true;
  /** `leases`: one turn per key across every process on the same data (turns/queue-types.ts). */
  readonly leases?: true;
  /** `onForeignAppend(listener)`: other processes' appends, as they commit (turns/foreign-events.ts). */
  readonly foreignAppends?: true;
}

/** What a store declares it can do; none for a store that declares nothing. */
export function capabilitiesOf(store: object): StoreCapabilities {
  return (store as { capabilities?: StoreCapabilities }).capabilities ?? {};
}

/**
 * The append-only log of every session, and the sessions' metadata. Every backend passes
 * `test/store/contract.ts`. All methods reject with a `SessiondError`.
 */
export interface Store {
  readonly backend: string;
  readonly durability: Durability;
  /** What the store can do beyond this interface (search, its inbox, leases, others' appends). */
  readonly capabilities?: StoreCapabilities;
  /**
   * Appends to the key's current session, creating it with `options.init` when the key has none.
   * Resolves once the entries are durable (under `strict`).
   */
  append(key: string, entries: EntryInput[], options?: AppendOptions): Promise<AppendResult>;
  /** The key's current (active) session. */
  getSession(key: string): Promise<Session | undefined>;
  getSessionById(id: string): Promise<Session | undefined>;
  listSessions(query?: SessionQuery): Promise<SessionPage>;
  /** Every generation of a key, newest first (the current one, then archived ones). */
  generations(key: string): Promise<Session[]>;
  readEntries(sessionId: string, range?: EntryRange): Promise<Entry[]>;
  /** The current session's context: the latest summary and the entries it keeps. */
  loadContext(key: string): Promise<StoredContext | undefined>;
  updateSession(key: string, patch: SessionPatch): Promise<Session>;
  /** Archives the current session (closing it with a reset entry) and starts the next generation. */
  reset(key: string, cause: ResetCause, init?: SessionInit): Promise<ResetResult>;
  /** Archives the current session with a reset entry and starts nothing: the next append starts one. */
  archive(key: string, cause: ResetCause): Promise<ArchiveResult>;
  /** Deletes every generation of a key and all their entries. */
  delete(key: string): Promise<DeleteResult>;
  /** Deletes one archived generation and its entries; the current session cannot be deleted this way. */
  deleteGeneration(sessionId: string): Promise<DeleteResult>;
  /**
   * Carries every generation of `from` over to `to` (identity links changed): all stay readable, numbered
   * by creation. If both keys have a current session, the one of `from` is archived (cause `relink`).
   */
  rekey(from: string, to: string): Promise<{ moved: number }>;
  scanSessions(scan: SessionScan): Promise<Session[]>;
  /**
   * A new session on `toKey` whose history is the first `atSeq` entries of the forked one: it references
   * that prefix (nothing is copied); the forked session is unchanged.
   */
  fork(key: string, options: ForkOptions): Promise<ForkResult>;
  /**
   * Archives the key's current session (cause `rewind`) and starts the next generation from its entries
   * before `toSeq`: what came after stays readable in the archived one.
   */
  rewind(key: string, options: RewindOptions): Promise<RewindResult>;
  /** The sessions forked from (or rewound from) these sessions, any key: their children. */
  forksOf(sessionIds: readonly string[]): Promise<Session[]>;
  /** Resolves when every write accepted so far is committed. */
  flush(): Promise<void>;
  /** Resolves when every write accepted so far is on disk, `relaxed` ones included. */
  sync(): Promise<void>;
  close(): Promise<void>;
}

/** A change a store committed, as it reports it to `onChange` listeners (live views, events). */
export type StoreChange =
  | { type: "appended"; key: string; session: Session; entries: Entry[] }
  | { type: "reset"; key: string; cause: ResetCause; archived: Session; current?: Session }
  | { type: "updated"; key: string; session: Session }
  | { type: "deleted"; key: string; sessions: number };

/**
 * A store that reports every change it commits (the store core does: every backend), and dates entries
 * given without a time by a clock of the caller's (the engine's, so one clock dates everything).
 */
export interface ChangeReporting {
  /** Calls `listener` once per committed change, before the writer hears its result; a throw is ignored. */
  onChange(listener: (change: StoreChange) => void): () => void;
  /** Entries appended without `ts` get `now()`'s time from here on. */
  dateEntriesBy(now: () => number): void;
}

export function reportsChanges(store: object): store is ChangeReporting {
  return typeof (store as Partial<ChangeReporting>).onChange === "function";
}

/** A store that commits in batches and can report their sizes (SQLite). */
export interface CommitObservable {
  observeCommits(listener: (operations: number) => void): () => void;
}

export function isCommitObservable(store: object): store is CommitObservable {
  return typeof (store as Partial<CommitObservable>).observeCommits === "function";
}

/** A store that counts the batches that fell back to a slower commit path (PostgreSQL). */
export interface BatchFallbackReporting {
  batchFallbacks(): { count: number };
}

export function reportsBatchFallbacks(store: object): store is BatchFallbackReporting {
  return typeof (store as Partial<BatchFallbackReporting>).batchFallbacks === "function";
}
