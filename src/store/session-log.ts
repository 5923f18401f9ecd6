import type { Entry, EntryInput, ResetCause, ResetEntry } from "../model/entry.js";
import { entryText, estimateTokens, makeEntry } from "../model/entry.js";
import { SessiondError } from "../model/errors.js";
import { newId } from "../model/ids.js";
import type { Session, SessionInit } from "../model/session.js";
import { redactEntryInput } from "../secrets/index.js";

/**
 * The rules every backend applies to a session's log, written once: seq numbering, idempotency,
 * and the session fields that follow from its entries. Backends supply the storage.
 */
export interface LogAccess {
  /** The entry of this session with this idempotency key, if stored. */
  findIdempotent(session: Session, idempotencyKey: string): Entry | undefined;
}

export function newSession(key: string, init: SessionInit, generation: number, now: number): Session {
  const session: Session = {
    id: newId(now),
    key,
    generation,
    state: "active",
    agent: init.agent,
    channel: init.channel,
    createdBy: init.createdBy,
    title: "",
    createdAt: init.createdAt !== undefined ? Math.min(now, init.createdAt) : now,
    lastActivityAt: now,
    entryCount: 0,
    messageCount: 0,
    approxTokens: 0,
    contextFromSeq: 1,
    overrides: {},
  };
  if (init.chatType !== undefined) session.chatType = init.chatType;
  return session;
}

export function initOf(session: Session): SessionInit {
  const init: SessionInit = { agent: session.agent, channel: session.channel, createdBy: session.createdBy };
  if (session.chatType !== undefined) init.chatType = session.chatType;
  return init;
}

/** Updates the session's derived fields for one appended entry. */
export function foldEntry(session: Session, entry: Entry): void {
  session.entryCount = entry.seq;
  // A session's times follow its entries (an import brings old ones), not the moment of the write.
  if (entry.seq === 1) {
    session.createdAt = Math.min(session.createdAt, entry.ts);
    session.lastActivityAt = entry.ts;
  } else session.lastActivityAt = Math.max(session.lastActivityAt, entry.ts);
  switch (entry.type) {
    case "message":
      session.messageCount += 1;
      session.approxTokens += estimateTokens(entryText(entry));
      break;
    case "title":
      session.title = entry.title;
      break;
    case "compaction":
      session.contextFromSeq = entry.firstKeptSeq;
      session.lastCompactionSeq = entry.seq;
      break;
  }
}

export interface PlannedAppend {
  entries: Entry[];
  created: boolean[];
  /** The entries to store, in seq order (the created ones). */
  fresh: Entry[];
}

/**
 * Numbers the inputs after the session's last entry and folds them into `session` (mutated).
 * An input whose idempotency key is already stored, or repeated within the inputs, yields the earlier entry.
 * The inputs are the store's own (parseEntryInput's copies): each becomes its entry, in place, with its
 * secrets scrubbed, so no backend ever stores one (this is the one path every entry takes to storage).
 */
export function planAppend(
  session: Session,
  inputs: EntryInput[],
  log: LogAccess,
  now: number,
  expectSessionId?: string,
): PlannedAppend {
  // `session` is the key's current session, or the one the append would start: neither is `expected`.
  if (expectSessionId !== undefined && session.id !== expectSessionId) {
    throw sessionChanged(session.key, expectSessionId);
  }
  const entries: Entry[] = [];
  const created: boolean[] = [];
  const fresh: Entry[] = [];
  let batchKeys: Map<string, Entry> | undefined;
  for (const input of inputs) {
    const { ts, idempotencyKey } = input;
    if (idempotencyKey !== undefined) {
      const earlier = batchKeys?.get(idempotencyKey) ?? log.findIdempotent(session, idempotencyKey);
      if (earlier) {
        entries.push(earlier);
        created.push(false);
        continue;
      }
    }
    const seq = session.entryCount + 1;
    if (input.type === "compaction" && (input.throughSeq >= seq || input.firstKeptSeq > seq)) {
      throw new SessiondError(
        "INVALID_ENTRY",
        `invalid compaction: it would be entry ${seq}, so it must summarise entries before it (throughSeq < ${seq}) and keep from at most ${seq}`,
      );
    }
    redactEntryInput(input);
    const header = { id: newId(now), sessionId: session.id, seq, ts: ts ?? now, idempotencyKey };
    const entry = makeEntry(header, input);
    foldEntry(session, entry);
    if (idempotencyKey !== undefined) {
      batchKeys ??= new Map();
      batchKeys.set(idempotencyKey, entry);
    }
    entries.push(entry);
    created.push(true);
    fresh.push(entry);
  }
  return { entries, created, fresh };
}

export interface PlannedReset {
  resetEntry: ResetEntry;
  next: Session;
}

/** Closes `current` (mutated: archived) with a reset entry naming the next session, if any. */
export function planArchive(
  current: Session,
  cause: ResetCause,
  now: number,
  nextSessionId?: string,
): ResetEntry {
  const seq = current.entryCount + 1;
  const body = { type: "reset" as const, cause, ...(nextSessionId ? { nextSessionId } : {}) };
  const resetEntry = makeEntry({ id: newId(now), sessionId: current.id, seq, ts: now }, body) as ResetEntry;
  foldEntry(current, resetEntry);
  current.state = "archived";
  current.archivedAt = now;
  return resetEntry;
}

/** Closes `current` (mutated: archived, with a reset entry) and makes the next generation. */
export function planReset(
  current: Session,
  cause: ResetCause,
  init: SessionInit | undefined,
  now: number,
): PlannedReset {
  const next = newSession(current.key, init ?? initOf(current), current.generation + 1, now);
  return { resetEntry: planArchive(current, cause, now, next.id), next };
}

export interface PlannedRekey {
  /** Every session of both keys, moved to `to` and renumbered by creation (mutated copies). */
  sessions: Session[];
  /** Set when both keys had a current session: the one of `from`, archived with this entry. */
  archived?: { session: Session; resetEntry: ResetEntry };
}

/** Merges the generations of `from` into `to`, oldest first; at most one stays current (`to`'s, if any). */
export function planRekey(from: Session[], to: Session[], toKey: string, now: number): PlannedRekey {
  const plan: PlannedRekey = { sessions: [] };
  const targetHasCurrent = to.some((s) => s.state === "active");
  const moved = from.map(cloneSession);
  for (const session of moved) {
    if (session.state === "active" && targetHasCurrent) {
      plan.archived = { session, resetEntry: planArchive(session, "relink", now) };
    }
    session.key = toKey;
  }
  plan.sessions = [...moved, ...to.map(cloneSession)].sort(
    (a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1),
  );
  plan.sessions.forEach((session, i) => {
    session.generation = i + 1;
  });
  return plan;
}

export function sessionNotFound(key: string): SessiondError {
  return new SessiondError("SESSION_NOT_FOUND", `no session for key ${JSON.stringify(key)}`, {
    details: { key },
  });
}

export function sessionChanged(key: string, expectedSessionId: string): SessiondError {
  return new SessiondError(
    "SESSION_CHANGED",
    `the write was computed for session ${expectedSessionId}, which is no longer the current session of ${JSON.stringify(key)}`,
    { details: { key, expectedSessionId } },
  );
}

export function currentNotDeletable(sessionId: string): SessiondError {
  return new SessiondError(
    "INVALID_ARGUMENT",
    `session ${sessionId} is current: reset or delete its key instead of deleting the generation`,
  );
}

/** A session copy that a plan can mutate without touching a cached original. */
export function cloneSession(session: Session): Session {
  return { ...session, overrides: { ...session.overrides } };
}

const values = new WeakMap<Session, Session>();

/**
 * The session as the store hands it out: a frozen copy, made once per version. The core never changes a
 * session once a plan is done with it (a later plan changes a copy), so every reader of one version shares
 * one value instead of a clone each.
 */
export function sessionValue(session: Session): Session {
  let value = values.get(session);
  if (!value) {
    value = Object.freeze({ ...session, overrides: Object.freeze({ ...session.overrides }) });
    values.set(session, value);
    values.set(value, value);
  }
  return value;
}
