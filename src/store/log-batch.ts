import type { Entry } from "../model/entry.js";
import type { InboxItem, InboxState } from "../model/inbox.js";
import type { Session } from "../model/session.js";
import type { Expectation, InboxWrite, KeyHead, MaybePromise, WriteChange } from "./driver.js";
import { cloneSession, type LogAccess } from "./session-log.js";

/** What an operation reads before it plans (where a driver may answer with a Promise). */
export interface BatchReads {
  head(key: string): MaybePromise<KeyHead>;
  generations(key: string): MaybePromise<Session[]>;
  sessionById(id: string): MaybePromise<Session | undefined>;
  findIdempotent(session: Session, keys: readonly string[]): MaybePromise<Map<string, Entry>>;
  /** The sessions forked (or rewound) from these ones, any key. */
  forksOf(sessionIds: readonly string[]): MaybePromise<Session[]>;
}

/** An operation's plan: the group it commits and what its caller gets once it has. */
export interface Planned<T> {
  changes: WriteChange[];
  expects: Expectation[];
  result: T;
  /** Inbox writes committed in the same group. */
  inbox?: InboxWrite[];
  /** Keys whose head the plan changed: remembered as the batch leaves them once the group commits. */
  keys: string[];
  /** Runs once the group has committed (caches follow). */
  committed?: () => void;
}

/**
 * One store operation as the writer runs it: `prepare` reads (awaited when the driver is asynchronous),
 * then `plan` decides, synchronously, against the batch's state, so that operations on one key in one
 * batch follow each other as if committed one by one.
 */
export interface Operation<T = unknown> {
  prepare(reads: BatchReads, batch: BatchState): MaybePromise<void>;
  plan(batch: BatchState, now: number): Planned<T>;
  /**
   * The keys the operation writes, when known before it is planned: a pipelined writer commits it beside
   * batches that hold none of them. Undefined: it may write any key.
   */
  readonly keys?: readonly string[];
  /** The lease fence the operation was submitted under (see fence.ts), checked by drivers with leases. */
  fence?: { key: string; epoch: number };
}

/** What one batch knows of the keys it writes: read once, then moved on by each plan in turn. */
export class BatchState {
  private readonly heads = new Map<string, KeyHead>();
  private readonly keyGenerations = new Map<string, Session[]>();
  private readonly byId = new Map<string, Session | undefined>();
  private readonly touched = new Map<string, Session | null>();
  /** Idempotency keys per session: those read in prepare, then those the batch's plans stored. */
  private readonly idempotent = new Map<string, Map<string, Entry>>();
  /** Inbox items' states as read in prepare (undefined: not stored), then as this batch's plans left them. */
  readonly inboxStates = new Map<string, InboxState | undefined>();
  /** The batch's admissions by dedupe key. */
  readonly inboxDedupe = new Map<string, InboxItem>();
  /** What `planAppend` looks idempotency keys up in: this batch. */
  readonly log: LogAccess = { findIdempotent: (session, key) => this.findIdempotent(session.id, key) };

  head(key: string): KeyHead {
    const head = this.heads.get(key);
    if (!head) throw new Error(`the batch did not read key ${JSON.stringify(key)}`);
    return head;
  }

  hasHead(key: string): boolean {
    return this.heads.has(key);
  }

  setHead(key: string, head: KeyHead): void {
    this.heads.set(key, head);
  }

  /** The key's sessions as read, each as this batch's plans have left it, newest first. */
  generations(key: string): Session[] {
    const byId = new Map((this.keyGenerations.get(key) ?? []).map((s) => [s.id, s]));
    for (const [id, session] of this.touched) {
      if (session === null) byId.delete(id);
      else if (session.key === key) byId.set(id, session);
      else byId.delete(id);
    }
    return [...byId.values()].map(cloneSession).sort((a, b) => b.generation - a.generation);
  }

  /** A plan changed (or created) this session. */
  touch(session: Session): void {
    this.touched.set(session.id, session);
  }

  /** A plan deleted this session. */
  deleted(id: string): void {
    this.touched.set(id, null);
  }

  setGenerations(key: string, sessions: Session[]): void {
    this.keyGenerations.set(key, sessions);
  }

  sessionById(id: string): Session | undefined {
    const touched = this.touched.get(id);
    return touched === null ? undefined : (touched ?? this.byId.get(id));
  }

  /** A plan of this batch deleted the session. */
  wasDeleted(id: string): boolean {
    return this.touched.get(id) === null;
  }

  setSessionById(id: string, session: Session | undefined): void {
    this.byId.set(id, session);
  }

  findIdempotent(sessionId: string, idempotencyKey: string): Entry | undefined {
    return this.idempotent.get(sessionId)?.get(idempotencyKey);
  }

  addIdempotent(sessionId: string, entries: Iterable<[string, Entry]>): void {
    let map = this.idempotent.get(sessionId);
    if (!map) {
      map = new Map();
      this.idempotent.set(sessionId, map);
    }
    for (const [key, entry] of entries) map.set(key, entry);
  }

  /** The head the batch leaves a key with (after its committed plans). */
  headOf(key: string): KeyHead | undefined {
    return this.heads.get(key);
  }
}
