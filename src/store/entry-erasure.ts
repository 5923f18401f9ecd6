import { type Entry, type EntryBody, makeEntry } from "../model/entry.js";
import { SessiondError } from "../model/errors.js";
import type { Session } from "../model/session.js";
import type { MaybePromise, StoreDriver } from "./driver.js";
import type { Operation } from "./log-batch.js";
import { type CommitHooks, readHead } from "./log-operations.js";
import { chain } from "./maybe-promise.js";
import { cloneSession, sessionValue } from "./session-log.js";

/** What `eraseEntries` rewrites in one session (docs/erasure.md). */
export interface EntryErasure {
  /** The new body of each erased entry, by the seq of one of the session's own entries. */
  bodies: ReadonlyMap<number, EntryBody>;
  /** The session's title afterwards, when it changes ("" for a title made from an erased message). */
  title?: string;
}

/**
 * A store that can rewrite entries in place: the one exception to the append-only log, for erasure by
 * subject (a person's messages in a group session). Each entry keeps its id, seq, time and idempotency
 * key (the log stays gap-free, a redelivery stays a duplicate); only its body is replaced.
 */
export interface EntryErasing {
  eraseEntries(sessionId: string, erasure: EntryErasure): Promise<{ rewritten: number }>;
}

export function isEntryErasing(store: object): store is EntryErasing {
  return typeof (store as Partial<EntryErasing>).eraseEntries === "function";
}

/**
 * The session's entries at the erased seqs with their new bodies, read from the driver (NOT_SUPPORTED from a
 * driver that does not apply `rewriteEntries`: it would keep what was to be erased).
 */
export function erasedEntries(
  driver: StoreDriver,
  session: Session,
  erasure: EntryErasure,
): MaybePromise<Entry[]> {
  if (!driver.rewritesEntries)
    throw new SessiondError(
      "NOT_SUPPORTED",
      `the ${driver.backend} store's driver cannot rewrite entries (it has no rewritesEntries)`,
    );
  const seqs = erasedSeqs(session, erasure);
  if (seqs.length === 0) return [];
  const range = { afterSeq: seqs[0]! - 1, beforeSeq: seqs.at(-1)! + 1, order: "asc" as const };
  return chain(driver.readEntries(session, range), (stored) => rewrittenEntries(stored, erasure));
}

/** The seqs to rewrite, checked to be the session's own entries (a fork's inherited ones are its origin's). */
function erasedSeqs(session: Session, erasure: EntryErasure): number[] {
  const first = (session.forkedFrom?.seq ?? 0) + 1;
  const seqs = [...erasure.bodies.keys()].sort((a, b) => a - b);
  for (const seq of seqs) {
    if (!Number.isSafeInteger(seq) || seq < first || seq > session.entryCount)
      throw new SessiondError(
        "INVALID_ARGUMENT",
        `seq ${seq} is not one of session ${session.id}'s own entries (${first}..${session.entryCount})`,
        { details: { sessionId: session.id, seq } },
      );
  }
  return seqs;
}

/** The stored entries with their new bodies: header kept, body replaced. */
function rewrittenEntries(stored: readonly Entry[], erasure: EntryErasure): Entry[] {
  return stored.flatMap((entry) => {
    const body = erasure.bodies.get(entry.seq);
    if (!body) return [];
    const header = { id: entry.id, sessionId: entry.sessionId, seq: entry.seq, ts: entry.ts };
    return [
      makeEntry(
        entry.idempotencyKey === undefined ? header : { ...header, idempotencyKey: entry.idempotencyKey },
        structuredClone(body),
      ),
    ];
  });
}

/**
 * The rewrite as a write: planned against the session as the batch holds it (an append of the same batch
 * to it keeps its seqs; a session deleted meanwhile rewrites nothing), its key's cached context dropped
 * once committed.
 */
export function eraseEntriesOperation(
  sessionId: string,
  entries: readonly Entry[],
  title: string | undefined,
  hooks: CommitHooks,
): Operation<{ rewritten: number }> {
  let key: string | undefined;
  return {
    prepare: (reads, batch) =>
      chain(batch.sessionById(sessionId) ?? reads.sessionById(sessionId), (session) => {
        if (batch.sessionById(sessionId) === undefined) batch.setSessionById(sessionId, session);
        key = session?.key;
        // The key's head too: when the session is its current one, the head leaves with the new title.
        return key === undefined ? undefined : readHead(key)(reads, batch);
      }),
    plan: (batch) => {
      const stored = batch.sessionById(sessionId);
      if (!stored || key === undefined)
        return { changes: [], expects: [], keys: [], result: { rewritten: 0 } };
      const session = cloneSession(stored);
      if (title !== undefined) session.title = title;
      batch.touch(session);
      const head = batch.head(session.key);
      if (head.current?.id === sessionId) batch.setHead(session.key, { ...head, current: session });
      const value = sessionValue(session);
      return {
        changes: [{ kind: "rewriteEntries", session, entries: [...entries] }],
        expects: [],
        keys: [session.key],
        result: { rewritten: entries.length },
        committed: () => {
          hooks.dropContext(session.key);
          hooks.changed({ type: "updated", key: session.key, session: value });
        },
      };
    },
  };
}
