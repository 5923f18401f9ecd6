import type { EntryInput, ResetCause } from "../model/entry.js";
import { SessiondError } from "../model/errors.js";
import type { Session, SessionInit } from "../model/session.js";
import { type EntryErasure, isEntryErasing } from "../store/entry-erasure.js";
import type { Fence } from "../store/fence.js";
import { MemoryStore } from "../store/memory/memory-store.js";
import {
  compareForPage,
  compareScan,
  encodeCursor,
  normaliseQuery,
  normaliseScan,
} from "../store/session-query.js";
import {
  type AppendOptions,
  type AppendResult,
  type DeleteResult,
  type EntryRange,
  type ForkOptions,
  type ForkResult,
  type RewindOptions,
  type RewindResult,
  reportsChanges,
  type SessionPage,
  type SessionPatch,
  type SessionQuery,
  type SessionScan,
  type Store,
  type StoreChange,
} from "../store/store.js";
import { hasLeases, type KeyLeases } from "../turns/queue-types.js";
import { incognitoRefusal } from "./errors.js";
import type { IncognitoKeys } from "./keys.js";

/** The proxies `routeIncognito` made, to the stored sessions' store behind each. */
const behind = new WeakMap<object, Store>();

/** The store of the stored sessions behind a routed store (the store itself when it is not one). */
export function storedSessionsOf(store: Store): Store {
  return behind.get(store) ?? store;
}

/**
 * The engine's store: every key's sessions in `persistent`, but those of incognito keys (`keys`) in a
 * memory store, so nothing of them reaches a disk or a database. Everything else the persistent store
 * offers (its search, inbox, backup, pool, metrics) is its own, untouched: search and backups never see an
 * incognito session. Lists and sweeps merge both; an incognito session's id is known from the writes that
 * made it.
 */
export function routeIncognito(persistent: Store, keys: IncognitoKeys, memory = new MemoryStore()): Store {
  const router = new IncognitoRouter(persistent, memory, keys);
  const routed = new Set<PropertyKey>(ROUTED);
  if (reportsChanges(persistent)) routed.add("onChange").add("dateEntriesBy");
  if (hasLeases(persistent)) routed.add("leases");
  const bound = new Map<PropertyKey, { of: unknown; fn: unknown }>();
  const proxy = new Proxy(persistent, {
    get(target, name, receiver) {
      const own = routed.has(name);
      const value: unknown = own ? Reflect.get(router, name) : Reflect.get(target, name, receiver);
      if (typeof value !== "function") return value;
      const known = bound.get(name);
      if (known && known.of === value) return known.fn;
      const fn = (value as (...args: unknown[]) => unknown).bind(own ? router : target);
      bound.set(name, { of: value, fn });
      return fn;
    },
  });
  behind.set(proxy, persistent);
  return proxy;
}

const ROUTED: readonly PropertyKey[] = [
  "append",
  "getSession",
  "getSessionById",
  "listSessions",
  "generations",
  "readEntries",
  "loadContext",
  "updateSession",
  "reset",
  "archive",
  "delete",
  "deleteGeneration",
  "rekey",
  "scanSessions",
  "fork",
  "rewind",
  "forksOf",
  "eraseEntries",
  "flush",
  "sync",
  "close",
];

class IncognitoRouter {
  /** The incognito sessions (generations) by id, with the bytes their entries took of the budget. */
  private readonly sessions = new Map<string, number>();
  /** Fences handed out for incognito keys: no other process can see their sessions, so no lease is taken. */
  private readonly localFences = new WeakSet<Fence>();
  private routedLeases: KeyLeases | undefined;
  /** Something was written to the memory store: flushes wait for it too. */
  private memoryWritten = false;

  constructor(
    private readonly persistent: Store,
    private readonly memory: MemoryStore,
    private readonly keys: IncognitoKeys,
  ) {}

  // A stored key's calls go straight through, adding no promise of their own to a turn.
  append(key: string, entries: EntryInput[], options?: AppendOptions): Promise<AppendResult> {
    if (!this.keys.has(key)) return this.persistent.append(key, entries, options);
    return this.appendIncognito(key, entries, options ?? {});
  }

  private async appendIncognito(key: string, entries: EntryInput[], options: AppendOptions) {
    if (options.inbox) {
      throw new SessiondError(
        "INVALID_ARGUMENT",
        `session ${JSON.stringify(key)} is incognito: its inputs are never admitted to the inbox`,
      );
    }
    const bytes = Buffer.byteLength(JSON.stringify(entries));
    this.keys.charge(bytes);
    this.memoryWritten = true;
    try {
      const result = await this.memory.append(key, entries, options);
      this.held(result.session.id, bytes);
      return result;
    } catch (error) {
      this.keys.refund(bytes);
      throw error;
    }
  }

  getSession(key: string): Promise<Session | undefined> {
    return this.of(key).getSession(key);
  }

  getSessionById(id: string): Promise<Session | undefined> {
    return this.owner(id).getSessionById(id);
  }

  listSessions(query: SessionQuery = {}): Promise<SessionPage> {
    if (this.sessions.size === 0) return this.persistent.listSessions(query);
    return this.mergedList(query);
  }

  private async mergedList(query: SessionQuery): Promise<SessionPage> {
    const { sort, limit } = normaliseQuery(query);
    const [stored, incognito] = await Promise.all([
      this.persistent.listSessions(query),
      this.memory.listSessions(query),
    ]);
    const merged = [...stored.sessions, ...incognito.sessions].sort((a, b) => compareForPage(sort, a, b));
    const sessions = merged.slice(0, limit);
    const last = sessions.at(-1);
    const more =
      merged.length > limit || stored.nextCursor !== undefined || incognito.nextCursor !== undefined;
    return more && last ? { sessions, nextCursor: encodeCursor(sort, last) } : { sessions };
  }

  generations(key: string): Promise<Session[]> {
    return this.of(key).generations(key);
  }

  readEntries(sessionId: string, range?: EntryRange) {
    return this.owner(sessionId).readEntries(sessionId, range);
  }

  loadContext(key: string) {
    return this.of(key).loadContext(key);
  }

  updateSession(key: string, patch: SessionPatch): Promise<Session> {
    return this.of(key).updateSession(key, patch);
  }

  reset(key: string, cause: ResetCause, init?: SessionInit) {
    if (!this.keys.has(key)) return this.persistent.reset(key, cause, init);
    return this.memory.reset(key, cause, init).then((result) => {
      this.held(result.current.id, 0);
      return result;
    });
  }

  archive(key: string, cause: ResetCause) {
    return this.of(key).archive(key, cause);
  }

  delete(key: string): Promise<DeleteResult> {
    if (!this.keys.has(key)) return this.persistent.delete(key);
    return this.deleteIncognito(key);
  }

  private async deleteIncognito(key: string): Promise<DeleteResult> {
    const generations = await this.memory.generations(key);
    const result = await this.memory.delete(key);
    for (const session of generations) this.dropped(session.id);
    this.keys.forget(key);
    return result;
  }

  async deleteGeneration(sessionId: string): Promise<DeleteResult> {
    const result = await this.owner(sessionId).deleteGeneration(sessionId);
    this.dropped(sessionId);
    return result;
  }

  eraseEntries(sessionId: string, erasure: EntryErasure): Promise<{ rewritten: number }> {
    const owner = this.owner(sessionId);
    if (!isEntryErasing(owner))
      return Promise.reject(
        new SessiondError("NOT_SUPPORTED", `the ${owner.backend} store cannot rewrite entries`),
      );
    return owner.eraseEntries(sessionId, erasure);
  }

  async rekey(from: string, to: string): Promise<{ moved: number }> {
    const incognito = this.keys.has(from);
    if (incognito !== this.keys.has(to)) {
      throw incognitoRefusal(incognito ? from : to, `moved to or from a stored key (${from} → ${to})`);
    }
    if (!incognito) return this.persistent.rekey(from, to);
    const moved = await this.memory.rekey(from, to);
    this.keys.forget(from);
    return moved;
  }

  async scanSessions(scan: SessionScan): Promise<Session[]> {
    if (this.sessions.size === 0) return this.persistent.scanSessions(scan);
    const { limit } = normaliseScan(scan);
    const [stored, incognito] = await Promise.all([
      this.persistent.scanSessions(scan),
      this.memory.scanSessions(scan),
    ]);
    return [...stored, ...incognito].sort(compareScan).slice(0, limit);
  }

  async fork(key: string, options: ForkOptions): Promise<ForkResult> {
    if (!this.keys.has(key)) {
      if (this.keys.has(options.toKey)) throw incognitoRefusal(options.toKey, "a fork of a stored session");
      return this.persistent.fork(key, options);
    }
    // A fork of an incognito session is incognito too: its history is in memory only.
    await this.keys.adopt(options.toKey);
    const result = await this.memory.fork(key, options);
    this.held(result.session.id, 0);
    return result;
  }

  rewind(key: string, options: RewindOptions): Promise<RewindResult> {
    if (!this.keys.has(key)) return this.persistent.rewind(key, options);
    return this.memory.rewind(key, options).then((result) => {
      this.held(result.current.id, 0);
      return result;
    });
  }

  async forksOf(sessionIds: readonly string[]): Promise<Session[]> {
    if (this.sessions.size === 0) return this.persistent.forksOf(sessionIds);
    const [stored, incognito] = await Promise.all([
      this.persistent.forksOf(sessionIds),
      this.memory.forksOf(sessionIds),
    ]);
    return [...stored, ...incognito];
  }

  flush(): Promise<void> {
    if (!this.memoryWritten) return this.persistent.flush();
    return Promise.all([this.persistent.flush(), this.memory.flush()]).then(() => undefined);
  }

  sync(): Promise<void> {
    if (!this.memoryWritten) return this.persistent.sync();
    return Promise.all([this.persistent.sync(), this.memory.flush()]).then(() => undefined);
  }

  async close(): Promise<void> {
    await this.memory.close();
    await this.persistent.close();
  }

  onChange(listener: (change: StoreChange) => void): () => void {
    const stops = [this.memory.onChange(listener)];
    if (reportsChanges(this.persistent)) stops.push(this.persistent.onChange(listener));
    return () => {
      for (const stop of stops) stop();
    };
  }

  dateEntriesBy(now: () => number): void {
    this.memory.dateEntriesBy(now);
    if (reportsChanges(this.persistent)) this.persistent.dateEntriesBy(now);
  }

  /** The persistent store's leases, but none for an incognito key: only this process has its session. */
  get leases(): KeyLeases {
    const stored = (this.persistent as Store & { leases: KeyLeases }).leases;
    this.routedLeases ??= {
      acquire: (key, onWait) => {
        if (!this.keys.has(key)) return stored.acquire(key, onWait);
        const fence: Fence = { key, epoch: 0 };
        this.localFences.add(fence);
        return Promise.resolve(fence);
      },
      release: (fence) => (this.localFences.has(fence) ? Promise.resolve() : stored.release(fence)),
    };
    return this.routedLeases;
  }

  private of(key: string): Store {
    return this.keys.has(key) ? this.memory : this.persistent;
  }

  private owner(sessionId: string): Store {
    return this.sessions.has(sessionId) ? this.memory : this.persistent;
  }

  private held(sessionId: string, bytes: number): void {
    this.memoryWritten = true;
    this.sessions.set(sessionId, (this.sessions.get(sessionId) ?? 0) + bytes);
  }

  private dropped(sessionId: string): void {
    const bytes = this.sessions.get(sessionId);
    if (bytes === undefined) return;
    this.sessions.delete(sessionId);
    this.keys.refund(bytes);
  }
}
