import type { Entry, EntryInput, ResetCause } from "../model/entry.js";
import { SessiondError } from "../model/errors.js";
import type { Session, SessionInit } from "../model/session.js";
import type { Expectation, InboxWrite, KeyHead, MaybePromise, WriteChange } from "./driver.js";
import type { BatchReads, BatchState, Operation, Planned } from "./log-batch.js";
import { all, chain } from "./maybe-promise.js";
import {
  cloneSession,
  currentNotDeletable,
  newSession,
  type PlannedAppend as PlannedEntries,
  planAppend,
  planArchive,
  planRekey,
  planReset,
  sessionNotFound,
  sessionValue,
} from "./session-log.js";
import { applyPatch, requireInit } from "./session-patch.js";
import type {
  AppendResult,
  ArchiveResult,
  DeleteResult,
  ResetResult,
  SessionPatch,
  StoreChange,
} from "./store.js";

/**
 * Every write of the store as an operation of the log core: what it reads, and how it plans against what
 * the batch knows. The rules themselves live in session-log.ts; here they meet the batch.
 */

/** Keeps the caches in step once a group committed (the core's side of it). */
export interface CommitHooks {
  appended(key: string, session: Session, fresh: readonly Entry[]): void;
  dropContext(key: string): void;
  /** Reports a committed change to the store's listeners. */
  changed(change: StoreChange): void;
}

function expectHead(key: string, head: KeyHead): Expectation {
  return head.current
    ? { kind: "session", key, sessionId: head.current.id, lastSeq: head.current.entryCount }
    : { kind: "noSession", key, lastGeneration: head.lastGeneration };
}

function currentOf(key: string, batch: BatchState): Session {
  const current = batch.head(key).current;
  if (!current) throw sessionNotFound(key);
  return cloneSession(current);
}

export function readHead(key: string) {
  return (reads: BatchReads, batch: BatchState) =>
    chain(reads.head(key), (head) => {
      if (!batch.hasHead(key)) batch.setHead(key, head);
    });
}

/**
 * An append, the hot path: a class rather than closures, so that an append allocates no function objects,
 * and no idempotency work when its inputs carry no keys.
 */
class AppendOperation implements Operation<AppendResult> {
  private readonly idempotencyKeys: string[] | undefined;
  readonly keys: readonly string[];
  fence?: { key: string; epoch: number };

  constructor(
    private readonly key: string,
    private readonly inputs: EntryInput[],
    private readonly init: SessionInit | undefined,
    private readonly expectSessionId: string | undefined,
    private readonly hooks: CommitHooks,
    private readonly inboxWrites: ((appended: AppendResult) => InboxWrite[]) | undefined,
  ) {
    let keys: string[] | undefined;
    for (const input of inputs) {
      if (input.idempotencyKey === undefined) continue;
      keys ??= [];
      keys.push(input.idempotencyKey);
    }
    this.idempotencyKeys = keys;
    this.keys = [key];
  }

  prepare(reads: BatchReads, batch: BatchState): MaybePromise<void> {
    const head = reads.head(this.key);
    return head instanceof Promise
      ? head.then((h) => this.prepared(reads, batch, h))
      : this.prepared(reads, batch, head);
  }

  private prepared(reads: BatchReads, batch: BatchState, head: KeyHead): MaybePromise<void> {
    if (!batch.hasHead(this.key)) batch.setHead(this.key, head);
    const current = batch.head(this.key).current;
    if (!current || !this.idempotencyKeys) return;
    return chain(reads.findIdempotent(current, this.idempotencyKeys), (found) =>
      batch.addIdempotent(current.id, found),
    );
  }

  plan(batch: BatchState, now: number): Planned<AppendResult> {
    const key = this.key;
    const head = batch.head(key);
    const session = head.current
      ? cloneSession(head.current)
      : newSession(key, requireInit(key, this.init), head.lastGeneration + 1, now);
    const created = head.current ? undefined : cloneSession(session);
    const plan = planAppend(session, this.inputs, batch.log, now, this.expectSessionId);
    const changes: WriteChange[] = [];
    if (created) changes.push({ kind: "createSession", session: created });
    if (plan.fresh.length > 0) changes.push({ kind: "appendEntries", session, entries: plan.fresh });
    batch.setHead(key, {
      current: session,
      lastGeneration: Math.max(head.lastGeneration, session.generation),
    });
    batch.touch(session);
    if (this.idempotencyKeys) {
      batch.addIdempotent(
        session.id,
        plan.fresh.flatMap((e) =>
          e.idempotencyKey === undefined ? [] : [[e.idempotencyKey, e] as [string, Entry]],
        ),
      );
    }
    const planned = new PlannedAppend(changes, [expectHead(key, head)], key, session, plan, this.hooks);
    if (this.inboxWrites) {
      const writes = this.inboxWrites(planned.result);
      if (writes.length > 0) planned.inbox = writes;
    }
    return planned;
  }
}

/** An append's plan, with `committed` as a method rather than a closure. */
class PlannedAppend implements Planned<AppendResult> {
  readonly keys: string[];
  readonly result: AppendResult;
  inbox?: InboxWrite[];

  constructor(
    readonly changes: WriteChange[],
    readonly expects: Expectation[],
    private readonly key: string,
    private readonly session: Session,
    private readonly plan: PlannedEntries,
    private readonly hooks: CommitHooks,
  ) {
    this.keys = [key];
    this.result = { session: sessionValue(session), entries: plan.entries, created: plan.created };
  }

  committed(): void {
    const { fresh } = this.plan;
    if (fresh.length === 0) return;
    this.hooks.appended(this.key, this.session, fresh);
    this.hooks.changed({ type: "appended", key: this.key, session: this.result.session, entries: fresh });
  }
}

export function appendOperation(
  key: string,
  inputs: EntryInput[],
  init: SessionInit | undefined,
  expectSessionId: string | undefined,
  hooks: CommitHooks,
  inbox?: (appended: AppendResult) => InboxWrite[],
): Operation<AppendResult> {
  return new AppendOperation(key, inputs, init, expectSessionId, hooks, inbox);
}

export function patchOperation(key: string, patch: SessionPatch, hooks: CommitHooks): Operation<Session> {
  return {
    prepare: readHead(key),
    plan: (batch) => {
      const head = batch.head(key);
      const session = applyPatch(currentOf(key, batch), patch);
      batch.setHead(key, { ...head, current: session });
      batch.touch(session);
      const result = sessionValue(session);
      return {
        changes: [{ kind: "updateSession", session }],
        expects: [expectHead(key, head)],
        keys: [key],
        result,
        committed: () => hooks.changed({ type: "updated", key, session: result }),
      };
    },
  };
}

export function resetOperation(
  key: string,
  cause: ResetCause,
  init: SessionInit | undefined,
  hooks: CommitHooks,
): Operation<ResetResult> {
  return {
    prepare: readHead(key),
    plan: (batch, now) => {
      const head = batch.head(key);
      const archived = currentOf(key, batch);
      const { resetEntry, next } = planReset(archived, cause, init, now);
      next.generation = Math.max(head.lastGeneration, archived.generation) + 1;
      batch.setHead(key, { current: next, lastGeneration: next.generation });
      batch.touch(archived);
      batch.touch(next);
      return {
        changes: [
          { kind: "appendEntries", session: archived, entries: [resetEntry] },
          { kind: "createSession", session: cloneSession(next) },
        ],
        expects: [expectHead(key, head)],
        keys: [key],
        result: { archived: sessionValue(archived), resetEntry, current: sessionValue(next) },
        committed() {
          hooks.dropContext(key);
          hooks.changed({
            type: "reset",
            key,
            cause,
            archived: this.result.archived,
            current: this.result.current,
          });
        },
      };
    },
  };
}

export function archiveOperation(
  key: string,
  cause: ResetCause,
  hooks: CommitHooks,
): Operation<ArchiveResult> {
  return {
    prepare: readHead(key),
    plan: (batch, now) => {
      const head = batch.head(key);
      const archived = currentOf(key, batch);
      const resetEntry = planArchive(archived, cause, now);
      batch.setHead(key, { lastGeneration: head.lastGeneration });
      batch.touch(archived);
      return {
        changes: [{ kind: "appendEntries", session: archived, entries: [resetEntry] }],
        expects: [expectHead(key, head)],
        keys: [key],
        result: { archived: sessionValue(archived), resetEntry },
        committed() {
          hooks.dropContext(key);
          hooks.changed({ type: "reset", key, cause, archived: this.result.archived });
        },
      };
    },
  };
}

function readGenerations(...keys: string[]) {
  return (reads: BatchReads, batch: BatchState) => {
    const pending = keys.map((key) =>
      chain(reads.generations(key), (sessions) =>
        chain(reads.head(key), (head) => {
          batch.setGenerations(key, sessions);
          if (!batch.hasHead(key)) batch.setHead(key, head);
        }),
      ),
    );
    return all(pending);
  };
}

export function deleteKeyOperation(key: string, hooks: CommitHooks): Operation<DeleteResult> {
  let forks: Session[] = [];
  return {
    prepare: (reads, batch) =>
      chain(readGenerations(key)(reads, batch), () =>
        chain(reads.forksOf(batch.generations(key).map((s) => s.id)), (found) => {
          forks = found;
        }),
      ),
    plan: (batch) => {
      const head = batch.head(key);
      const sessions = batch.generations(key);
      refuseOrphaningForks(sessions, forks, batch);
      let entries = 0;
      for (const session of sessions) {
        entries += session.entryCount;
        batch.deleted(session.id);
      }
      batch.setHead(key, { lastGeneration: 0 });
      return {
        changes: sessions.map((session) => ({ kind: "deleteSession" as const, session })),
        expects: head.current ? [expectHead(key, head)] : [],
        keys: [key],
        result: { sessions: sessions.length, entries },
        committed: () => {
          hooks.dropContext(key);
          if (sessions.length > 0) hooks.changed({ type: "deleted", key, sessions: sessions.length });
        },
      };
    },
  };
}

export function deleteGenerationOperation(sessionId: string): Operation<DeleteResult> {
  let forks: Session[] = [];
  return {
    prepare: (reads, batch) =>
      chain(reads.sessionById(sessionId), (session) => {
        if (batch.sessionById(sessionId) === undefined) batch.setSessionById(sessionId, session);
        return chain(reads.forksOf([sessionId]), (found) => {
          forks = found;
        });
      }),
    plan: (batch) => {
      const session = batch.sessionById(sessionId);
      if (!session) return { changes: [], expects: [], keys: [], result: { sessions: 0, entries: 0 } };
      if (session.state === "active") throw currentNotDeletable(sessionId);
      refuseOrphaningForks([session], forks, batch);
      batch.deleted(sessionId);
      return {
        changes: [{ kind: "deleteSession", session }],
        expects: [],
        keys: [],
        result: { sessions: 1, entries: session.entryCount },
      };
    },
  };
}

/**
 * A fork reads its first entries through the session it was forked from: deleting that session would
 * take them from it. Deleting it with its forks (a whole key whose later generations were rewound from
 * earlier ones) is fine; deleting it from under a fork that stays is refused.
 */
function refuseOrphaningForks(
  deleting: readonly Session[],
  forks: readonly Session[],
  batch: BatchState,
): void {
  const gone = new Set(deleting.map((s) => s.id));
  const left = forks.filter((fork) => !gone.has(fork.id) && !batch.wasDeleted(fork.id));
  if (left.length === 0) return;
  throw new SessiondError(
    "SESSION_HAS_FORKS",
    `${left.length === 1 ? "a session is" : `${left.length} sessions are`} forked from this history (${left
      .slice(0, 5)
      .map((s) => JSON.stringify(s.key))
      .join(", ")}${left.length > 5 ? ", …" : ""}): delete ${left.length === 1 ? "it" : "them"} first`,
    { details: { forks: left.map((s) => ({ key: s.key, sessionId: s.id })) } },
  );
}

export function rekeyOperation(from: string, to: string, hooks: CommitHooks): Operation<{ moved: number }> {
  return {
    prepare: readGenerations(from, to),
    plan: (batch, now): Planned<{ moved: number }> => {
      const fromSessions = batch.generations(from);
      const toSessions = batch.generations(to);
      const expects = [expectHead(from, batch.head(from)), expectHead(to, batch.head(to))];
      const plan = planRekey(fromSessions, toSessions, to, now);
      const changes: WriteChange[] = [];
      if (plan.archived) {
        const { session, resetEntry } = plan.archived;
        changes.push({ kind: "appendEntries", session, entries: [resetEntry] });
      }
      changes.push({ kind: "moveSessions", from, sessions: plan.sessions });
      for (const session of plan.sessions) batch.touch(session);
      batch.setHead(from, { lastGeneration: 0 });
      const current = plan.sessions.find((s) => s.state === "active");
      batch.setHead(to, {
        ...(current ? { current } : {}),
        lastGeneration: plan.sessions.length,
      });
      return {
        changes,
        expects,
        keys: [from, to],
        result: { moved: fromSessions.length },
        committed: () => {
          hooks.dropContext(from);
          hooks.dropContext(to);
        },
      };
    },
  };
}
