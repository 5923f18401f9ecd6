import type { Entry, EntryInput, ResetCause } from "../../model/entry.js";
import { parseEntryInput } from "../../model/entry-schema.js";
import { SessiondError } from "../../model/errors.js";
import type { Session, SessionInit, StoredContext } from "../../model/session.js";
import { readRange } from "../entry-range.js";
import { frozenCopy } from "../frozen.js";
import {
  cloneSession,
  currentNotDeletable,
  newSession,
  planAppend,
  planArchive,
  planRekey,
  planReset,
  sessionNotFound,
} from "../session-log.js";
import { applyPatch, requireInit } from "../session-patch.js";
import {
  compareForPage,
  compareScan,
  encodeCursor,
  matchesQuery,
  matchesScan,
  normaliseQuery,
  normaliseScan,
} from "../session-query.js";
import type {
  AppendOptions,
  AppendResult,
  ArchiveResult,
  DeleteResult,
  EntryRange,
  ResetResult,
  SessionPage,
  SessionPatch,
  SessionQuery,
  SessionScan,
  Store,
} from "../store.js";

interface Generation {
  session: Session;
  entries: Entry[];
  byIdempotencyKey: Map<string, Entry>;
}

/**
 * Everything in this process's memory: for tests, and as the fallback when no database can be opened.
 * Lost when the process exits.
 */
export class MemoryStore implements Store {
  readonly backend = "memory";
  readonly durability = "relaxed" as const;
  private readonly byId = new Map<string, Generation>();
  private readonly current = new Map<string, Generation>();
  private readonly generationsByKey = new Map<string, Generation[]>();
  private closed = false;

  async append(key: string, inputs: EntryInput[], options?: AppendOptions): Promise<AppendResult> {
    const init = options?.init;
    this.assertOpen();
    const parsed = inputs.map(parseEntryInput);
    const existing = this.current.get(key);
    const session = existing
      ? cloneSession(existing.session)
      : newSession(
          key,
          requireInit(key, init),
          (this.generationsByKey.get(key)?.length ?? 0) + 1,
          Date.now(),
        );
    const plan = planAppend(
      session,
      parsed,
      { findIdempotent: (_s, k) => existing?.byIdempotencyKey.get(k) },
      Date.now(),
      options?.expectSessionId,
    );
    const target = existing ?? this.addGeneration(session);
    for (const fresh of plan.fresh) {
      // Its own frozen copy: what the caller does with the entries it gets back changes nothing stored.
      const entry = frozenCopy(fresh).value as Entry;
      target.entries.push(entry);
      if (entry.idempotencyKey !== undefined) target.byIdempotencyKey.set(entry.idempotencyKey, entry);
    }
    target.session = session;
    return { session: cloneSession(session), entries: plan.entries, created: plan.created };
  }

  async getSession(key: string): Promise<Session | undefined> {
    this.assertOpen();
    const generation = this.current.get(key);
    return generation && cloneSession(generation.session);
  }

  async getSessionById(id: string): Promise<Session | undefined> {
    this.assertOpen();
    const generation = this.byId.get(id);
    return generation && cloneSession(generation.session);
  }

  async listSessions(query?: SessionQuery): Promise<SessionPage> {
    this.assertOpen();
    const q = normaliseQuery(query);
    const matching = [...this.byId.values()]
      .map((g) => g.session)
      .filter((s) => matchesQuery(q, s))
      .sort((a, b) => compareForPage(q.sort, a, b));
    const sessions = matching.slice(0, q.limit).map(cloneSession);
    const last = sessions.at(-1);
    return matching.length > q.limit && last
      ? { sessions, nextCursor: encodeCursor(q.sort, last) }
      : { sessions };
  }

  async generations(key: string): Promise<Session[]> {
    this.assertOpen();
    return (this.generationsByKey.get(key) ?? []).map((g) => cloneSession(g.session)).reverse();
  }

  async readEntries(sessionId: string, range?: EntryRange): Promise<Entry[]> {
    this.assertOpen();
    return readRange(this.byId.get(sessionId)?.entries ?? [], range);
  }

  async loadContext(key: string): Promise<StoredContext | undefined> {
    this.assertOpen();
    const generation = this.current.get(key);
    if (!generation) return undefined;
    const { session, entries } = generation;
    const kept = entries.slice(session.contextFromSeq - 1).filter((e) => e.type !== "compaction");
    const context: StoredContext = { session: cloneSession(session), entries: kept };
    const summary =
      session.lastCompactionSeq === undefined ? undefined : entries[session.lastCompactionSeq - 1];
    if (summary?.type === "compaction") context.summary = summary;
    return context;
  }

  async updateSession(key: string, patch: SessionPatch): Promise<Session> {
    this.assertOpen();
    const generation = this.current.get(key);
    if (!generation) throw sessionNotFound(key);
    generation.session = applyPatch(generation.session, patch);
    return cloneSession(generation.session);
  }

  async reset(key: string, cause: ResetCause, init?: SessionInit): Promise<ResetResult> {
    this.assertOpen();
    const generation = this.current.get(key);
    if (!generation) throw sessionNotFound(key);
    const archived = cloneSession(generation.session);
    const { resetEntry, next } = planReset(archived, cause, init, Date.now());
    generation.entries.push(resetEntry);
    generation.session = archived;
    this.current.delete(key);
    const current = this.addGeneration(next);
    return { archived: cloneSession(archived), resetEntry, current: cloneSession(current.session) };
  }

  async archive(key: string, cause: ResetCause): Promise<ArchiveResult> {
    this.assertOpen();
    const generation = this.current.get(key);
    if (!generation) throw sessionNotFound(key);
    const archived = cloneSession(generation.session);
    const resetEntry = planArchive(archived, cause, Date.now());
    generation.entries.push(resetEntry);
    generation.session = archived;
    this.current.delete(key);
    return { archived: cloneSession(archived), resetEntry };
  }

  async deleteGeneration(sessionId: string): Promise<DeleteResult> {
    this.assertOpen();
    const generation = this.byId.get(sessionId);
    if (!generation) return { sessions: 0, entries: 0 };
    if (generation.session.state === "active") throw currentNotDeletable(sessionId);
    this.byId.delete(sessionId);
    const key = generation.session.key;
    const rest = (this.generationsByKey.get(key) ?? []).filter((g) => g !== generation);
    if (rest.length > 0) this.generationsByKey.set(key, rest);
    else this.generationsByKey.delete(key);
    return { sessions: 1, entries: generation.entries.length };
  }

  async rekey(from: string, to: string): Promise<{ moved: number }> {
    this.assertOpen();
    if (from === to) return { moved: 0 };
    const fromGens = this.generationsByKey.get(from) ?? [];
    const toGens = this.generationsByKey.get(to) ?? [];
    const plan = planRekey(
      fromGens.map((g) => g.session),
      toGens.map((g) => g.session),
      to,
      Date.now(),
    );
    if (plan.archived) this.byId.get(plan.archived.session.id)?.entries.push(plan.archived.resetEntry);
    const merged: Generation[] = [];
    for (const session of plan.sessions) {
      const generation = this.byId.get(session.id)!;
      generation.session = session;
      merged.push(generation);
      if (session.state === "active") this.current.set(to, generation);
    }
    this.generationsByKey.delete(from);
    this.current.delete(from);
    this.generationsByKey.set(to, merged);
    return { moved: fromGens.length };
  }

  async scanSessions(scan: SessionScan): Promise<Session[]> {
    this.assertOpen();
    const s = normaliseScan(scan);
    return [...this.byId.values()]
      .map((g) => g.session)
      .filter((session) => matchesScan(s, session))
      .sort(compareScan)
      .slice(0, s.limit)
      .map(cloneSession);
  }

  async sync(): Promise<void> {
    this.assertOpen();
  }

  async delete(key: string): Promise<DeleteResult> {
    this.assertOpen();
    const generations = this.generationsByKey.get(key) ?? [];
    let entries = 0;
    for (const g of generations) {
      entries += g.entries.length;
      this.byId.delete(g.session.id);
    }
    this.generationsByKey.delete(key);
    this.current.delete(key);
    return { sessions: generations.length, entries };
  }

  async flush(): Promise<void> {
    this.assertOpen();
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  private addGeneration(session: Session): Generation {
    const generation: Generation = { session, entries: [], byIdempotencyKey: new Map() };
    this.byId.set(session.id, generation);
    this.current.set(session.key, generation);
    const list = this.generationsByKey.get(session.key) ?? [];
    list.push(generation);
    this.generationsByKey.set(session.key, list);
    return generation;
  }

  private assertOpen(): void {
    if (this.closed) throw new SessiondError("STORE_CLOSED", "the store is closed");
  }
}
