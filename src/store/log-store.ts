import type { Entry, EntryInput, ResetCause } from "../model/entry.js";
import { parseEntryInput } from "../model/entry-schema.js";
import { isSessiondError, SessiondError } from "../model/errors.js";
import type { Session, SessionInit, StoredContext } from "../model/session.js";
import type { MaybePromise, StoreDriver } from "./driver.js";
import {
  type EntryErasing,
  type EntryErasure,
  erasedEntries,
  eraseEntriesOperation,
} from "./entry-erasure.js";
import { checkRange } from "./entry-range.js";
import { currentFence } from "./fence.js";
import { prefixFacts } from "./fork-facts.js";
import { forkOperation, headMoved, rewindOperation } from "./fork-operations.js";
import { GroupCommit } from "./group-commit.js";
import { KeyMemory } from "./key-memory.js";
import { Lineage } from "./lineage.js";
import type { Operation } from "./log-batch.js";
import { asStoreError, type CommitContext, commitOperations } from "./log-commit.js";
import {
  appendOperation,
  archiveOperation,
  type CommitHooks,
  deleteGenerationOperation,
  deleteKeyOperation,
  patchOperation,
  rekeyOperation,
  resetOperation,
} from "./log-operations.js";
import { chain } from "./maybe-promise.js";
import { sessionChanged, sessionNotFound, sessionValue } from "./session-log.js";
import { encodeCursor, normaliseQuery, normaliseScan } from "./session-query.js";
import type {
  AppendOptions,
  AppendResult,
  ArchiveResult,
  ChangeReporting,
  DeleteResult,
  Durability,
  EntryRange,
  ForkOptions,
  ForkResult,
  ResetResult,
  RewindOptions,
  RewindResult,
  SessionPage,
  SessionPatch,
  SessionQuery,
  SessionScan,
  Store,
  StoreCapabilities,
  StoreChange,
} from "./store.js";
import { StoreInbox } from "./store-inbox.js";
import { inputBytes, SMALL_WRITE_BYTES } from "./write-bytes.js";

export interface LogStoreOptions {
  /** `strict` (default): an append resolves once it is on disk. */
  durability?: Durability;
  /** How long a commit waits to gather writes; 0 (default): the next turn of the event loop. */
  commitIntervalMs?: number;
  /** The most write operations in one batch (default 2,000). */
  maxBatch?: number;
  /** The most bytes of writes waiting to be committed (default 64 MiB): more is refused with STORE_BUSY. */
  maxQueuedBytes?: number;
  /** How many keys' current sessions the core keeps in memory (default 10,000). */
  sessionCacheSize?: number;
  /** How many bytes of active sessions' kept entries to hold in memory for context loads (default 16 MiB). */
  contextCacheBytes?: number;
}

/**
 * The store, written once over a `StoreDriver`: every write planned here (session-log.ts has the rules)
 * and group-committed by one writer, the caches, fail-stop and what other writers changed. A backend is a
 * driver; `MemoryStore`, `SqliteStore` and `JsonlStore` are this class over theirs.
 */
export class LogStore implements Store, ChangeReporting, EntryErasing {
  readonly backend: string;
  /** None here: each backend's store declares its own. */
  readonly capabilities: StoreCapabilities = {};
  readonly durability: Durability;
  protected readonly writer: GroupCommit<Operation>;
  private readonly keys: KeyMemory;
  private readonly hooks: CommitHooks;
  private closed = false;
  private changeListeners: ReadonlyArray<(change: StoreChange) => void> = [];
  private entryClock: (() => number) | undefined;
  private readonly lineage: Lineage;

  constructor(
    protected readonly driver: StoreDriver,
    options: LogStoreOptions & { defaultDurability?: Durability } = {},
  ) {
    this.backend = driver.backend;
    this.durability = options.durability ?? options.defaultDurability ?? "strict";
    const lineage = new Lineage(driver);
    this.lineage = lineage;
    const memory = new KeyMemory(driver, options.sessionCacheSize ?? 10_000, options.contextCacheBytes);
    this.keys = memory;
    this.hooks = {
      appended: (key, session, fresh) => memory.contexts.appended(key, session.id, session, fresh),
      dropContext: (key) => memory.contexts.drop(key),
      changed: (change) => {
        for (const listener of this.changeListeners) {
          try {
            listener(change);
          } catch {
            // A listener's failure is its own: the commit it hears of stands.
          }
        }
      },
    };
    const commit: CommitContext = {
      driver,
      memory,
      reads: {
        head: (key) => memory.head(key),
        generations: (key) => driver.generations(key),
        sessionById: (id) => driver.sessionById(id),
        // A remote store's lookup is a round trip: what the context cache holds whole answers it first.
        findIdempotent: driver.remoteReads
          ? (session, keys) =>
              memory.contexts.idempotent(session.key, session, keys) ?? lineage.findIdempotent(session, keys)
          : (session, keys) => lineage.findIdempotent(session, keys),
        forksOf: (ids) => driver.forksOf?.(ids) ?? [],
      },
    };
    const barrier = driver.durableBarrier?.bind(driver);
    this.writer = new GroupCommit<Operation>((ops, durable) => commitOperations(commit, ops, durable), {
      intervalMs: options.commitIntervalMs ?? 0,
      maxBatch: options.maxBatch ?? 2000,
      ...(barrier ? { durableBarrier: barrier } : {}),
      ...(!barrier && (driver.concurrentCommits ?? 1) > 1
        ? { maxInFlight: driver.concurrentCommits, keysOf: (op: Operation) => op.keys }
        : {}),
      ...(options.maxQueuedBytes === undefined ? {} : { maxQueuedBytes: options.maxQueuedBytes }),
    });
  }

  append(key: string, inputs: EntryInput[], options?: AppendOptions): Promise<AppendResult> {
    let parsed: EntryInput[];
    try {
      parsed = inputs.map(parseEntryInput);
    } catch (error) {
      return Promise.reject(error);
    }
    const clock = this.entryClock;
    if (clock) for (const entry of parsed) entry.ts ??= clock();
    if (options?.inbox && !this.driver.inbox)
      return Promise.reject(
        new SessiondError(
          "INVALID_ARGUMENT",
          `a ${this.backend} store keeps no inbox to write with an append`,
        ),
      );
    const op = appendOperation(
      key,
      parsed,
      options?.init,
      options?.expectSessionId,
      this.hooks,
      options?.inbox,
    );
    // The lease of the turn submitting it (PostgreSQL), read now: the plan runs later, outside the turn.
    const fence = currentFence(key);
    if (fence) op.fence = { key: fence.key, epoch: fence.epoch };
    const durable = (options?.durability ?? this.durability) === "strict";
    return this.writer.submit(op, durable, inputBytes(parsed));
  }

  getSession(key: string): Promise<Session | undefined> {
    return this.read(() =>
      chain(this.foreign(), () =>
        chain(this.keys.head(key), (head) => head.current && sessionValue(head.current)),
      ),
    );
  }

  getSessionById(id: string): Promise<Session | undefined> {
    return this.read(() => this.driver.sessionById(id));
  }

  listSessions(query?: SessionQuery): Promise<SessionPage> {
    return this.read(() => {
      const q = normaliseQuery(query);
      return chain(this.driver.list(q), (rows): SessionPage => {
        const sessions = rows.slice(0, q.limit);
        const last = sessions.at(-1);
        return rows.length > q.limit && last
          ? { sessions, nextCursor: encodeCursor(q.sort, last) }
          : { sessions };
      });
    });
  }

  generations(key: string): Promise<Session[]> {
    return this.read(() => this.driver.generations(key));
  }

  readEntries(sessionId: string, range?: EntryRange): Promise<Entry[]> {
    return this.read(() => {
      const r = checkRange(range);
      return chain(this.driver.sessionById(sessionId), (session) =>
        session ? this.lineage.readEntries(session, r) : [],
      );
    });
  }

  loadContext(key: string): Promise<StoredContext | undefined> {
    return this.read(() =>
      chain(this.foreign(), () =>
        chain(this.keys.head(key), (head) => {
          const session = head.current;
          if (!session) return undefined;
          const hit = this.keys.contexts.get(key, session.id, session);
          if (hit) return { session: sessionValue(session), ...hit };
          return chain(this.lineage.loadKept(session), (kept) => {
            const context: StoredContext = { session: sessionValue(session), entries: kept.entries };
            if (kept.summary) context.summary = kept.summary;
            // Only what is still the key's current session as loaded: a commit may have moved it on meanwhile.
            if (this.keys.isCurrent(key, head))
              this.keys.contexts.put(key, session.id, session, context, kept.frozen === true);
            return context;
          });
        }),
      ),
    );
  }

  updateSession(key: string, patch: SessionPatch): Promise<Session> {
    return this.submit(patchOperation(key, patch, this.hooks));
  }

  reset(key: string, cause: ResetCause, init?: SessionInit): Promise<ResetResult> {
    return this.submit(resetOperation(key, cause, init, this.hooks));
  }

  archive(key: string, cause: ResetCause): Promise<ArchiveResult> {
    return this.submit(archiveOperation(key, cause, this.hooks));
  }

  delete(key: string): Promise<DeleteResult> {
    return this.submit(deleteKeyOperation(key, this.hooks));
  }

  deleteGeneration(sessionId: string): Promise<DeleteResult> {
    return this.submit(deleteGenerationOperation(sessionId));
  }

  rekey(from: string, to: string): Promise<{ moved: number }> {
    if (from === to) return this.read(() => ({ moved: 0 }));
    return this.submit(rekeyOperation(from, to, this.hooks));
  }

  async fork(key: string, options: ForkOptions): Promise<ForkResult> {
    this.assertBranches();
    const source =
      options.sessionId === undefined
        ? await this.getSession(key)
        : await this.getSessionById(options.sessionId);
    if (!source || source.key !== key) throw sessionNotFound(key);
    // An archived session's last entry is the reset that closed it: not part of a conversation to go on with.
    const newest = source.state === "archived" ? Math.max(0, source.entryCount - 1) : source.entryCount;
    const facts = await this.read(() => prefixFacts(this.lineage, source, options.atSeq ?? newest));
    return this.submit(forkOperation(source, facts, options.toKey, this.hooks));
  }

  async rewind(key: string, options: RewindOptions): Promise<RewindResult> {
    this.assertBranches();
    const source = await this.getSession(key);
    if (!source) throw sessionNotFound(key);
    if (options.expectSessionId !== undefined && source.id !== options.expectSessionId)
      throw sessionChanged(key, options.expectSessionId);
    // A head that moved on says more than a seq that is not there (any more).
    if (options.expectHead !== undefined && options.expectHead !== source.entryCount)
      throw headMoved(key, options.expectHead, source.entryCount);
    if (!Number.isSafeInteger(options.toSeq) || options.toSeq < 1 || options.toSeq > source.entryCount)
      throw new SessiondError(
        "INVALID_ARGUMENT",
        `toSeq ${options.toSeq} is not an entry of ${JSON.stringify(key)}: a rewind leaves out an entry 1..${source.entryCount} and all after it`,
        { details: { toSeq: options.toSeq, entryCount: source.entryCount } },
      );
    const facts = await this.read(() => prefixFacts(this.lineage, source, options.toSeq - 1));
    return this.submit(rewindOperation(source, facts, options.expectHead, this.hooks));
  }

  /** Erasure's rewrite of some of a session's own entries (entry-erasure.ts, docs/erasure.md). */
  async eraseEntries(sessionId: string, erasure: EntryErasure): Promise<{ rewritten: number }> {
    const session = await this.getSessionById(sessionId);
    if (!session) return { rewritten: 0 };
    const entries = await this.read(() => erasedEntries(this.driver, session, erasure));
    return this.submit(eraseEntriesOperation(sessionId, entries, erasure.title, this.hooks));
  }

  forksOf(sessionIds: readonly string[]): Promise<Session[]> {
    return this.read(() => (sessionIds.length === 0 ? [] : (this.driver.forksOf?.(sessionIds) ?? [])));
  }

  /** Forks need a driver that finds them again (`forksOf`): deleting their origin must see them. */
  private assertBranches(): void {
    if (!this.driver.forksOf)
      throw new SessiondError(
        "NOT_SUPPORTED",
        `the ${this.backend} store's driver cannot fork (it has no forksOf)`,
      );
  }

  scanSessions(scan: SessionScan): Promise<Session[]> {
    return this.read(() => this.driver.scan(normaliseScan(scan)));
  }

  async flush(): Promise<void> {
    await this.writer.flush();
    if (!this.closed) await this.driver.flush?.();
  }

  async sync(): Promise<void> {
    await this.writer.flush();
    this.assertOpen();
    // After a failed fsync nothing can be promised to be on disk, even if this one passes.
    if (this.writer.failed) throw this.writer.failed;
    try {
      await this.driver.sync();
    } catch (error) {
      throw isSessiondError(error, "STORE_FAILED") ? this.writer.failStop(error) : error;
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await this.writer.close();
    this.closed = true;
    await this.driver.close(this.writer.failed !== undefined);
  }

  onChange(listener: (change: StoreChange) => void): () => void {
    this.changeListeners = [...this.changeListeners, listener];
    return () => {
      this.changeListeners = this.changeListeners.filter((l) => l !== listener);
    };
  }

  dateEntriesBy(now: () => number): void {
    this.entryClock = now;
  }

  /** The inbox the driver keeps, written by this store's writer (for stores whose driver has one). */
  protected driverInbox(): StoreInbox {
    if (!this.driver.inbox)
      throw new SessiondError("INVALID_ARGUMENT", `a ${this.backend} store keeps no inbox of its own`);
    return new StoreInbox(this.backend, this, this.driver.inbox, this.writer);
  }

  /** Calls `listener` with the operations in each batch this store commits (for metrics). */
  observeCommits(listener: (operations: number) => void): () => void {
    return this.writer.onBatch(listener);
  }

  /** Sizes of recent commit batches. */
  recentBatchSizes(): readonly number[] {
    return this.writer.recentBatchSizes();
  }

  private submit<T>(op: Operation<T>): Promise<T> {
    return this.writer.submit(op as Operation, true, SMALL_WRITE_BYTES);
  }

  /** Drops what the core remembers of keys other writers changed (before a read that relies on it). */
  protected foreign(): MaybePromise<void> {
    return this.keys.foreign();
  }

  protected read<T>(run: () => MaybePromise<T>): Promise<T> {
    try {
      this.assertOpen();
      const value = run();
      return value instanceof Promise
        ? value.catch((error: unknown) => Promise.reject(asStoreError(error)))
        : Promise.resolve(value);
    } catch (error) {
      return Promise.reject(asStoreError(error));
    }
  }

  private assertOpen(): void {
    if (this.closed) throw new SessiondError("STORE_CLOSED", "the store is closed");
  }
}

export { asStoreError } from "./log-commit.js";
