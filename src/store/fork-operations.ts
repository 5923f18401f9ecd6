import { SessiondError } from "../model/errors.js";
import type { ForkOrigin, Session } from "../model/session.js";
import type { PrefixFacts } from "./fork-facts.js";
import type { Operation } from "./log-batch.js";
import { type CommitHooks, readHead } from "./log-operations.js";
import { chain } from "./maybe-promise.js";
import {
  cloneSession,
  initOf,
  newSession,
  planArchive,
  sessionChanged,
  sessionNotFound,
  sessionValue,
} from "./session-log.js";
import type { ForkResult, RewindResult } from "./store.js";

/** A session made of `source`'s first `facts.seq` entries, on `key` as its generation `generation`. */
function forkedSession(
  source: Session,
  facts: PrefixFacts,
  key: string,
  generation: number,
  now: number,
): Session {
  const session = newSession(key, initOf(source), generation, now);
  session.title = source.title;
  session.overrides = { ...source.overrides };
  session.entryCount = facts.seq;
  session.messageCount = facts.messageCount;
  session.approxTokens = facts.approxTokens;
  session.contextFromSeq = facts.contextFromSeq;
  if (facts.lastCompactionSeq !== undefined) session.lastCompactionSeq = facts.lastCompactionSeq;
  session.forkedFrom = { key: source.key, sessionId: source.id, seq: facts.seq };
  return session;
}

/** A rewind computed on a head (`expectHead`) that has moved on since. */
export function headMoved(key: string, expectHead: number, head: number): SessiondError {
  return new SessiondError(
    "SESSION_CHANGED",
    `the rewind was computed on entry ${expectHead}, but the session of ${JSON.stringify(key)} is at entry ${head} now`,
    { details: { key, expectHead, head } },
  );
}

function keyTaken(key: string): SessiondError {
  return new SessiondError(
    "KEY_TAKEN",
    `key ${JSON.stringify(key)} has a session already: fork to a new key`,
    {
      details: { key },
    },
  );
}

/**
 * A fork: a new session on `toKey` referencing `source`'s prefix (facts read before, from entries that
 * never change). `toKey` must have no current session; `source` must still be there.
 */
export function forkOperation(
  source: Session,
  facts: PrefixFacts,
  toKey: string,
  hooks: CommitHooks,
): Operation<ForkResult> {
  return {
    keys: [toKey],
    prepare: (reads, batch) =>
      chain(readHead(toKey)(reads, batch), () =>
        chain(reads.sessionById(source.id), (found) => {
          if (batch.sessionById(source.id) === undefined) batch.setSessionById(source.id, found);
        }),
      ),
    plan: (batch, now) => {
      if (!batch.sessionById(source.id)) throw sessionNotFound(source.key);
      const head = batch.head(toKey);
      if (head.current) throw keyTaken(toKey);
      const session = forkedSession(source, facts, toKey, head.lastGeneration + 1, now);
      batch.setHead(toKey, { current: session, lastGeneration: session.generation });
      batch.touch(session);
      const result: ForkResult = {
        session: sessionValue(session),
        forkedFrom: session.forkedFrom as ForkOrigin,
      };
      return {
        changes: [{ kind: "createSession", session: cloneSession(session) }],
        expects: [{ kind: "noSession", key: toKey, lastGeneration: head.lastGeneration }],
        keys: [toKey],
        result,
        committed: () => hooks.changed({ type: "updated", key: toKey, session: result.session }),
      };
    },
  };
}

/**
 * A rewind: the key's current session (still `source`, and at `expectHead` when given) is archived with a
 * `rewind` reset entry, and the next generation starts from its first `facts.seq` entries.
 */
export function rewindOperation(
  source: Session,
  facts: PrefixFacts,
  expectHead: number | undefined,
  hooks: CommitHooks,
): Operation<RewindResult> {
  const key = source.key;
  return {
    keys: [key],
    prepare: readHead(key),
    plan: (batch, now) => {
      const head = batch.head(key);
      const current = head.current;
      if (!current) throw sessionNotFound(key);
      if (current.id !== source.id) throw sessionChanged(key, source.id);
      if (expectHead !== undefined && current.entryCount !== expectHead)
        throw headMoved(key, expectHead, current.entryCount);
      const archived = cloneSession(current);
      const next = forkedSession(
        archived,
        facts,
        key,
        Math.max(head.lastGeneration, archived.generation) + 1,
        now,
      );
      const resetEntry = planArchive(archived, "rewind", now, next.id);
      batch.setHead(key, { current: next, lastGeneration: next.generation });
      batch.touch(archived);
      batch.touch(next);
      const result: RewindResult = {
        current: sessionValue(next),
        archived: sessionValue(archived),
        forkedFrom: next.forkedFrom as ForkOrigin,
      };
      return {
        changes: [
          { kind: "appendEntries", session: archived, entries: [resetEntry] },
          { kind: "createSession", session: cloneSession(next) },
        ],
        expects: [{ kind: "session", key, sessionId: current.id, lastSeq: current.entryCount }],
        keys: [key],
        result,
        committed: () => {
          hooks.dropContext(key);
          hooks.changed({
            type: "reset",
            key,
            cause: "rewind",
            archived: result.archived,
            current: result.current,
          });
        },
      };
    },
  };
}
