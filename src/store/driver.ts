import type { CompactionEntry, Entry } from "../model/entry.js";
import type { SessiondError } from "../model/errors.js";
import type { InboxItem, InboxOutcome, InboxState } from "../model/inbox.js";
import type { Session } from "../model/session.js";
import type { NormalisedQuery } from "./session-query.js";
import type { EntryRange, SessionScan } from "./store.js";

/**
 * The storage a `LogStore` (log-store.ts) runs on, in the shape of Kysely's dialects: the core plans every
 * write (seq, idempotency, resets, rekeys, the expected session) and batches them; a driver only reads what
 * it is asked and commits what it is given, atomically. memory, sqlite, jsonl and postgres implement it.
 *
 * Every read may answer synchronously (memory, SQLite, JSONL) or with a Promise (PostgreSQL): the core only
 * awaits what is a Promise, so a synchronous driver pays no extra turn of the event loop. Sessions and
 * entries a driver returns belong to the caller (the core mutates session copies while it plans); a driver
 * that keeps them in memory returns copies. Every method throws (or rejects with) a `SessiondError`.
 */
export type MaybePromise<T> = T | Promise<T>;

/** What the core needs to append to a key: its current session and the generation a new one would take. */
export interface KeyHead {
  /** The key's current (active) session, if it has one. */
  current?: Session;
  /** The highest generation any session of the key has (archived ones included); 0 for a new key. */
  lastGeneration: number;
}

/** The kept context of a session: the entries from `contextFromSeq` (compactions excluded) and the summary. */
export interface KeptContext {
  entries: Entry[];
  /** The entry at `lastCompactionSeq`, when the session has one. */
  summary?: CompactionEntry;
  /**
   * The entries (and summary) are deeply frozen and the driver never changes them: the core's context
   * cache keeps these very objects instead of frozen copies (entries parsed for this call may be frozen in
   * place). Leave unset for entries that are not frozen, or that the driver may change later.
   */
  frozen?: true;
}

/**
 * What another process changed since the driver was last asked: nothing, everything (the driver cannot
 * tell which keys), or these keys. The core drops what it remembers of them.
 */
export type ForeignChanges = { kind: "none" } | { kind: "all" } | { kind: "keys"; keys: string[] };

/**
 * What a write group relies on: the key as the core saw it when it planned. A driver that others can
 * write to (another process, another machine) checks it inside the commit and refuses the group as
 * `stale` when it no longer holds; one whose core is the only writer may skip the check.
 */
export type Expectation =
  /** The key's current session is `sessionId`, and its last entry is `lastSeq` (its `entryCount`). */
  | { kind: "session"; key: string; sessionId: string; lastSeq: number }
  /** The key has no current session, and the highest generation of its sessions is `lastGeneration`. */
  | { kind: "noSession"; key: string; lastGeneration: number };

/** One change a write group makes; a group's changes are applied in order. */
export type WriteChange =
  /** A new session (a new generation of its key), stored before any of its entries. */
  | { kind: "createSession"; session: Session }
  /**
   * Entries appended to `session` (numbered after what is stored, gap-free), and the session as they
   * leave it (counts, title, times, compaction pointers; `state`/`archivedAt` when a reset entry closes it).
   */
  | { kind: "appendEntries"; session: Session; entries: Entry[] }
  /** The session's metadata changed (overrides, state, archivedAt); no entries. */
  | { kind: "updateSession"; session: Session }
  /**
   * Sessions moved to another key and renumbered (a rekey): `sessions` is every session of the target key
   * afterwards, with `key` and `generation` set. The driver may need to renumber in two steps where
   * (key, generation) is unique.
   */
  | { kind: "moveSessions"; from: string; sessions: Session[] }
  /** A session and all its entries are gone. */
  | { kind: "deleteSession"; session: Session }
  /**
   * Erasure (docs/erasure.md), the one rewrite of an append-only log: the session's own entries at these
   * entries' seqs are replaced by them (same id, seq, time and idempotency key; another body), and the
   * session is left as given (its title). No byte of the old bodies may stay in what the driver writes.
   */
  | { kind: "rewriteEntries"; session: Session; entries: Entry[] };

/** The changes of one store operation (an append, a reset, a rekey...): all of them commit, or none. */
export interface WriteGroup {
  changes: WriteChange[];
  /** What the plan read; a group whose expectations fail is refused as `stale` and nothing of it stays. */
  expects: Expectation[];
  /**
   * The fencing epoch of the lease the writer holds for the key, when it holds one (PostgreSQL): the
   * driver refuses the group with `LEASE_LOST` when the lease has moved on.
   */
  fence?: { key: string; epoch: number };
  /**
   * Inbox writes that commit with the group's changes (a driver with `inbox` only): an input's admission
   * with its user entry, a turn's end with its reply.
   */
  inbox?: InboxWrite[];
}

/** A write to the inbox of admitted inputs (model/inbox.ts) that a driver with `inbox` commits in a group. */
export type InboxWrite =
  /** A new item, stored unless one with its id or `dedupeKey` is there already (then nothing changes). */
  | {
      kind: "admit";
      item: InboxItem /** `item.envelope` as JSON, when the caller has it. */;
      envelopeJson?: string;
    }
  /** The item moves to `state` when `canTransition` allows it from the stored state (else nothing changes). */
  | { kind: "end"; id: string; state: InboxState; at: number; outcome?: InboxOutcome };

/**
 * The inbox of admitted inputs kept in the store itself, so that an input's admission commits with its user
 * entry and a turn's end with its reply: one writer, one transaction each. Items returned are the caller's.
 */
export interface DriverInbox {
  get(id: string): MaybePromise<InboxItem | undefined>;
  /**
   * An item's state alone (undefined: not stored), without reading or copying its envelope: what a
   * transition checks. Absent: the core reads the whole item (`get`).
   */
  stateOf?(id: string): MaybePromise<InboxState | undefined>;
  byDedupeKey(dedupeKey: string): MaybePromise<InboxItem | undefined>;
  /** Every item still `pending` or `running`, in admission order. */
  unfinished(): MaybePromise<InboxItem[]>;
  /**
   * Forgets finished items last updated before `before`; how many went. The core calls it between
   * commits; it need not be durable (what a crash keeps is pruned again).
   */
  prune(before: number): MaybePromise<number>;
}

/**
 * A group's outcome. `stale`: an expectation failed (another writer got there first); the core reads the
 * keys again and plans the operation anew. `error`: the group failed on its own (nothing of it stays).
 */
export type GroupOutcome = { ok: true } | { ok: false; stale: true } | { ok: false; error: SessiondError };

/**
 * A driver. The core calls `commit` from one writer at a time (never two commits in flight), and reads
 * at any time, concurrently with a commit that awaits.
 */
export interface StoreDriver {
  /** The backend's name as `Store.backend` reports it: `memory`, `sqlite`, `jsonl`, `postgres`. */
  readonly backend: string;
  /**
   * Every read is a round trip to a server (PostgreSQL): the core answers from memory what it can vouch
   * for (an idempotency lookup in a session whose every entry it holds) instead of asking.
   */
  readonly remoteReads?: boolean;
  /**
   * The driver applies `rewriteEntries` changes (erasure). Without it the store refuses `eraseEntries` with
   * NOT_SUPPORTED: a driver that skipped a change kind it does not know would keep what was to be erased.
   */
  readonly rewritesEntries?: boolean;
  /** The inbox this driver keeps and commits with the groups' changes (`WriteGroup.inbox`), when it does. */
  readonly inbox?: DriverInbox;
  // ——— reads ———

  /** The key's current session and last generation. */
  loadKey(key: string): MaybePromise<KeyHead>;
  /** Every session of the key, newest generation first. */
  generations(key: string): MaybePromise<Session[]>;
  sessionById(id: string): MaybePromise<Session | undefined>;
  /** The entries of the session with these idempotency keys (keys not stored are absent from the map). */
  findIdempotent(session: Session, keys: readonly string[]): MaybePromise<Map<string, Entry>>;
  /**
   * A range of the session's own entries (`range` already checked by `checkRange`), in the range's order:
   * a fork's own entries are numbered from `forkedFrom.seq + 1` (the core reads the ones before through
   * its origin, lineage.ts). A new session carries every field set (a fork starts with counts, compaction
   * pointers and `forkedFrom`): a driver stores them all.
   */
  readEntries(session: Session, range: EntryRange & { order: "asc" | "desc" }): MaybePromise<Entry[]>;
  /** The session's kept context, as of `session` (its `contextFromSeq` and `lastCompactionSeq`). */
  loadKept(session: Session): MaybePromise<KeptContext>;
  /**
   * One page of sessions for a list, in the query's order and after its cursor, filters applied: at most
   * `query.limit + 1` of them (the extra one tells the core there is a next page). Keyset, never an offset.
   */
  list(query: NormalisedQuery): MaybePromise<Session[]>;
  /** Sessions for a sweep, oldest first by `scanTime` (session-query.ts), at most `scan.limit`. */
  scan(scan: SessionScan & { limit: number }): MaybePromise<Session[]>;
  /**
   * The sessions whose `forkedFrom.sessionId` is one of these (forks and rewound generations, any key):
   * served by an index, never a scan of every session. Optional: a store over a driver without it cannot
   * fork or rewind (`NOT_SUPPORTED`), so no session ever reads through another there.
   */
  forksOf?(sessionIds: readonly string[]): MaybePromise<Session[]>;
  /** What other writers changed since the last call (the core asks before it plans and before reads it caches). */
  foreignChanges(): MaybePromise<ForeignChanges>;

  // ——— writes ———

  /**
   * Commits the groups of one batch, in order, as one transaction where the backend has them (a failed
   * group is rolled back alone, e.g. to a savepoint, and the others still commit); one outcome per group.
   * Later groups may have been planned on a failed one (the same key): after a failure, and whenever
   * another writer may have committed since the core last asked, check each group's `expects`.
   * `durable`: some group must be on disk when acknowledged; a driver without `durableBarrier` makes it
   * so before it returns. Throws (rejects) only when the batch as a whole could not commit: a
   * `STORE_FAILED` then stops the store (fail-stop, group-commit.ts).
   */
  commit(groups: readonly WriteGroup[], durable: boolean): MaybePromise<GroupOutcome[]>;
  /**
   * Before operations refused as stale are planned again: holds their keys for this writer (row locks on a
   * connection kept for the next commit of them), so that other writers cannot move them on between this
   * plan's reads and its commit. The release is called once that commit is over (or none came). Optional:
   * a driver others write to beside it (PostgreSQL); without it the core waits a little before replanning.
   */
  hold?(keys: readonly string[]): Promise<() => void>;
  /**
   * How many batches `commit` may be running at once, on keys no two of them share (default 1): a driver
   * whose commits are durable themselves and each take their own connection (PostgreSQL).
   */
  readonly concurrentCommits?: number;
  /**
   * Makes the last committed batch durable, off the event loop, while the next batch gathers; the
   * batch's appends resolve when it does. A rejection stops the store. Absent: `commit` is durable itself.
   */
  durableBarrier?(): Promise<void>;
  /**
   * The inline variant for a small durable batch (below `INLINE_SYNC_MAX_BATCH`, one writer appending in
   * turn), called right after its `commit`: cheaper than a hand-off to the thread pool. Absent: the barrier.
   */
  syncNow?(): void;
  /** Everything committed so far, `relaxed` writes included, reaches the disk (`Store.sync`). */
  sync(): MaybePromise<void>;
  /** After every accepted write is committed (`Store.flush`): what the driver still holds back goes out. */
  flush?(): MaybePromise<void>;
  /** Releases everything; `failed` when the store stopped (keep what a reopen must replay). */
  close(failed: boolean): MaybePromise<void>;
}
