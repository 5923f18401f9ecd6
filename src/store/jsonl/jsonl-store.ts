import { constants } from "node:fs";
import { join } from "node:path";
import { LRUCache } from "lru-cache";
import type { Entry, EntryInput, ResetCause } from "../../model/entry.js";
import { parseEntryInput } from "../../model/entry-schema.js";
import { isSessiondError, SessiondError } from "../../model/errors.js";
import type { Session, SessionInit, StoredContext } from "../../model/session.js";
import { checkRange } from "../entry-range.js";
import { type CommitBatch, GroupCommit, INLINE_SYNC_MAX_BATCH, messageOf } from "../group-commit.js";
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
  Durability,
  EntryRange,
  ResetResult,
  SessionPage,
  SessionPatch,
  SessionQuery,
  SessionScan,
  Store,
} from "../store.js";
import { inputBytes, SMALL_WRITE_BYTES } from "../write-bytes.js";
import { ChangeWatch } from "./change-watch.js";
import { writeClaimIdentity } from "./claim-identity.js";
import { entryLines, metadataLine } from "./crabtalk-format.js";
import { scanDirectory, settleKey, type Tracked } from "./directory-scan.js";
import { type FileSystem, fsyncDir, fsyncOrFail, realFs } from "./durable-fs.js";
import { fileFamily, parseStem, sessionFileName, stemOf } from "./file-names.js";
import { FsyncPlacement } from "./fsync-placement.js";
import { type IndexedFile, saveSnapshot } from "./index-snapshot.js";
import { Journal } from "./journal.js";
import { replayJournals } from "./journal-replay.js";
import { encodeLine } from "./json-line.js";
import { META_DIR } from "./meta-dir.js";
import { type LineProblem, parseSessionFile } from "./session-file.js";
import { applySidecar, Sidecars } from "./sidecar.js";
import { hasSize } from "./size-probe.js";
import { type Unwritten, UnwrittenBytes } from "./unwritten-bytes.js";

export interface JsonlStoreOptions {
  /** The directory of session files. */
  path: string;
  /** `strict` (default): an append resolves once its lines are fsync'd. */
  durability?: Durability;
  /** How long a commit waits to gather appends; 0 (default): the next turn of the event loop. */
  commitIntervalMs?: number;
  /** The most write operations in one batch (default 2,000). */
  maxBatch?: number;
  /** Sessions whose entries are kept in memory after a read or write (default 1,000). */
  cacheSize?: number;
  /** …and the most bytes of their lines kept so (default 64 MiB). */
  cacheBytes?: number;
  /** Called for each unreadable line found in a session file (default: a process warning). */
  onProblem?: (problem: LineProblem) => void;
  /** The most bytes of problems `problems` keeps, the newest (default 1 MiB). */
  problemBytes?: number;
  /** The most bytes of appends waiting to be committed (default 64 MiB): more is refused with STORE_BUSY. */
  maxQueuedBytes?: number;
  /** The file layer (default node:fs); tests put one that injects faults here. */
  fs?: FileSystem;
}

interface Loaded {
  entries: Entry[];
  byIdempotencyKey: Map<string, Entry>;
  /** The bytes of the lines these entries were read from or written as: the cache's measure. */
  bytes: number;
}

/** What a batch will write once its operations have run. */
interface PendingWrites {
  chunks: Map<string, { tracked: Tracked; text: string }>;
  renames: Array<{ tracked: Tracked; to: string }>;
  sidecars: Map<string, Session>;
  removals: Tracked[];
  /** Sessions whose files this batch created. */
  created: Tracked[];
  dirChanged: boolean;
  /** Whether the batch's frame is in the journal: past this point a failure cannot be rolled back. */
  journaled: boolean;
}

type BatchResults = ReturnType<CommitBatch>;

/** A checkpoint empties the journal once it holds this much. */
const JOURNAL_MAX_BYTES = 64 * 1024 * 1024;
/** …or once this many session files wait for their fsync (each holds a file descriptor). */
const MAX_UNSYNCED_FILES = 500;
/** How often an fsync goes off the loop again after waits that took no appends (fsync-placement.ts). */
const FSYNC_PROBE_EVERY = 32;
/**
 * While batches follow one another, a session's bytes wait this many batches (or until they are this big)
 * before they go to its file, in one write for all of them.
 */
const UNWRITTEN_MAX_BATCHES = 64;
const UNWRITTEN_MAX_BYTES = 64 * 1024;
/** …and all sessions' are written once they hold this much together. */
const UNWRITTEN_MAX_TOTAL_BYTES = 16 * 1024 * 1024;

/**
 * Sessions as a directory of CrabTalk session files (behaviours.md §2), one file per session.
 * Appends are group-committed through a write-ahead journal: one fsync of it acknowledges a batch spread
 * over many files, which are written after it (a busy store's a few batches later) and fsync'd at
 * checkpoints. An index of the directory (written at close) makes opening 100,000 sessions a matter of
 * stat calls.
 */
export class JsonlStore implements Store {
  readonly backend = "jsonl";
  readonly durability: Durability;
  readonly path: string;
  private readonly metaDir: string;
  private readonly claimsDir: string;
  private readonly sidecars: Sidecars;
  private readonly journal: Journal;
  private readonly writer: GroupCommit;
  private readonly byId = new Map<string, Tracked>();
  private readonly byKey = new Map<string, Tracked[]>();
  /** The highest file seq seen per `{agent}_{sender_slug}` prefix. */
  private readonly maxSeq = new Map<string, number>();
  private readonly loaded: LRUCache<string, Loaded>;
  private readonly fds = new Map<string, number>();
  private readonly unsynced = new Set<string>();
  /** Files written since open: their size and mtime are read again for the index at close. */
  private readonly touched = new Set<Tracked>();
  private readonly onProblem: (problem: LineProblem) => void;
  private readonly fs: FileSystem;
  /** What the batch being committed queued; empty between batches. */
  private pending: PendingWrites = emptyPending();
  /**
   * Bytes in the journal not yet written to their session files. A busy batch's go to the files in the
   * shadow of a later batch's fsync, or as soon as the store has nothing left to commit; this process
   * writes a session's before reading its file.
   */
  private readonly unwritten = new UnwrittenBytes(UNWRITTEN_MAX_BYTES, UNWRITTEN_MAX_TOTAL_BYTES);
  private idleWriteScheduled = false;
  private readonly fsyncPlacement = new FsyncPlacement(FSYNC_PROBE_EVERY);
  private readonly changes: ChangeWatch;
  /** Whether the last committed batch left its fsync to the barrier (off the event loop). */
  private fsyncOffLoop = false;
  private closed = false;
  private stats = { filesRead: 0, filesFromIndex: 0 };
  /** The newest problems found, bounded by bytes (oldest dropped first). */
  private readonly problemLog: LRUCache<number, LineProblem>;
  private problemCount = 0;

  constructor(options: JsonlStoreOptions) {
    this.path = options.path;
    this.durability = options.durability ?? "strict";
    this.fs = options.fs ?? realFs;
    this.loaded = new LRUCache({
      max: options.cacheSize ?? 1000,
      maxSize: options.cacheBytes ?? 64 * 1024 * 1024,
      sizeCalculation: (loaded) => Math.max(1, loaded.bytes),
    });
    this.problemLog = new LRUCache({
      max: 100_000,
      maxSize: options.problemBytes ?? 1024 * 1024,
      sizeCalculation: (p) => 64 + p.file.length + p.reason.length,
    });
    this.onProblem =
      options.onProblem ??
      ((p) => process.emitWarning(`${p.file} line ${p.line}: ${p.reason}`, { code: "SESSIOND_JSONL_LINE" }));
    this.metaDir = join(this.path, META_DIR);
    this.claimsDir = join(this.metaDir, "claims");
    this.sidecars = new Sidecars(join(this.metaDir, "meta"), this.fs);
    this.journal = new Journal(this.metaDir, this.fs);
    try {
      for (const dir of [this.path, this.metaDir, this.claimsDir, join(this.metaDir, "meta")])
        this.fs.mkdirSync(dir, { recursive: true });
      replayJournals(this.metaDir, this.path, (p) => this.report(p), this.fs);
      this.openIndex();
    } catch (error) {
      try {
        this.journal.close();
      } catch {
        // Never opened: nothing of it on disk but, at most, an empty file a later open removes.
      }
      throw asStoreError(error, this.path);
    }
    this.changes = new ChangeWatch(this.path);
    this.writer = new GroupCommit((ops, durable) => this.commit(ops, durable), {
      intervalMs: options.commitIntervalMs ?? 0,
      maxBatch: options.maxBatch ?? 2000,
      ...(options.maxQueuedBytes !== undefined ? { maxQueuedBytes: options.maxQueuedBytes } : {}),
      durableBarrier: () => {
        const synced = this.journal.syncAsync();
        // Bytes of earlier batches that have waited long enough (in the fsync's shadow when it runs off
        // the loop). A failed write keeps them queued (the journal holds them); reads and checkpoints
        // report it.
        this.writeQueued(this.unwritten.takeDue(UNWRITTEN_MAX_BATCHES), false);
        const offLoop = this.fsyncOffLoop;
        return synced.then(() => {
          if (offLoop) this.fsyncPlacement.waited(this.writer.queued > 0);
          this.writeWhenIdle();
        });
      },
    });
  }

  /** The newest problems found in the files (at most `problemBytes` of them), oldest first. */
  get problems(): LineProblem[] {
    const problems: LineProblem[] = [];
    for (const problem of this.problemLog.rvalues()) if (problem) problems.push(problem);
    return problems;
  }

  /** What memory holds of sessions' entries: how many sessions, and the bytes of their lines. */
  cacheStats(): { sessions: number; bytes: number } {
    return { sessions: this.loaded.size, bytes: this.loaded.calculatedSize };
  }

  /** How the last open found its sessions: from the index, or by reading the file. */
  indexStats(): { filesRead: number; filesFromIndex: number } {
    return { ...this.stats };
  }

  recentBatchSizes(): readonly number[] {
    return this.writer.recentBatchSizes();
  }

  append(key: string, inputs: EntryInput[], options?: AppendOptions): Promise<AppendResult> {
    const init = options?.init;
    let parsed: EntryInput[];
    try {
      parsed = inputs.map(parseEntryInput);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.submit(
      () => {
        const now = Date.now();
        const existing = this.currentForWrite(key);
        // Only a compaction can fail a plan half way, and only a title renames the file: for messages the
        // session in memory (no one else holds it) is updated in place instead of through a copy.
        const session = !existing
          ? newSession(key, requireInit(key, init), this.nextGeneration(key), now)
          : parsed.every((input) => input.type === "message")
            ? existing.session
            : cloneSession(existing.session);
        // The session's entries are read only where the append needs them (an idempotency key to look
        // up, messages a compaction keeps); otherwise they are kept up to date only if already cached.
        const loaded = !existing
          ? undefined
          : parsed.some((input) => input.idempotencyKey !== undefined || input.type === "compaction")
            ? this.load(existing)
            : this.cached(existing.session.id);
        const plan = planAppend(
          session,
          parsed,
          { findIdempotent: (_s, k) => loaded?.byIdempotencyKey.get(k) },
          now,
          options?.expectSessionId,
        );
        const tracked = existing ?? this.createFile(session);
        if (plan.fresh.length > 0) this.record(tracked, loaded, plan.fresh, session);
        return { session: cloneSession(session), entries: plan.entries, created: plan.created };
      },
      (options?.durability ?? this.durability) === "strict",
      inputBytes(parsed),
    );
  }

  async getSession(key: string): Promise<Session | undefined> {
    this.assertOpen();
    const tracked = this.current(key);
    return tracked && cloneSession(tracked.session);
  }

  async getSessionById(id: string): Promise<Session | undefined> {
    this.assertOpen();
    const tracked = this.byId.get(id);
    return tracked && cloneSession(tracked.session);
  }

  async listSessions(query?: SessionQuery): Promise<SessionPage> {
    this.assertOpen();
    const q = normaliseQuery(query);
    const matching: Session[] = [];
    for (const tracked of this.byId.values())
      if (matchesQuery(q, tracked.session)) matching.push(tracked.session);
    matching.sort((a, b) => compareForPage(q.sort, a, b));
    const sessions = matching.slice(0, q.limit).map(cloneSession);
    const last = sessions.at(-1);
    return matching.length > q.limit && last
      ? { sessions, nextCursor: encodeCursor(q.sort, last) }
      : { sessions };
  }

  async generations(key: string): Promise<Session[]> {
    this.assertOpen();
    return (this.byKey.get(key) ?? [])
      .map((t) => cloneSession(t.session))
      .sort((a, b) => b.generation - a.generation);
  }

  async readEntries(sessionId: string, range?: EntryRange): Promise<Entry[]> {
    const r = checkRange(range);
    this.assertOpen();
    const tracked = this.byId.get(sessionId);
    if (!tracked) return [];
    const entries = this.guard(() => this.load(tracked).entries);
    const inRange = entries.filter(
      (e) => e.seq > (r.afterSeq ?? 0) && (r.beforeSeq === undefined || e.seq < r.beforeSeq),
    );
    if (r.order === "desc") inRange.reverse();
    return r.limit === undefined ? inRange : inRange.slice(0, r.limit);
  }

  async loadContext(key: string): Promise<StoredContext | undefined> {
    this.assertOpen();
    const tracked = this.current(key);
    if (!tracked) return undefined;
    const { session } = tracked;
    const { entries } = this.guard(() => this.load(tracked));
    const kept = entries.filter((e) => e.seq >= session.contextFromSeq && e.type !== "compaction");
    const context: StoredContext = { session: cloneSession(session), entries: kept };
    const summary = entries.find((e) => e.seq === session.lastCompactionSeq);
    if (summary?.type === "compaction") context.summary = summary;
    return context;
  }

  updateSession(key: string, patch: SessionPatch): Promise<Session> {
    return this.submit(() => {
      const tracked = this.currentForWrite(key);
      if (!tracked) throw sessionNotFound(key);
      tracked.session = applyPatch(tracked.session, patch);
      this.pending.sidecars.set(tracked.session.id, tracked.session);
      return cloneSession(tracked.session);
    });
  }

  reset(key: string, cause: ResetCause, init?: SessionInit): Promise<ResetResult> {
    return this.submit(() => {
      const tracked = this.currentForWrite(key);
      if (!tracked) throw sessionNotFound(key);
      const loaded = this.load(tracked);
      const archived = cloneSession(tracked.session);
      const { resetEntry, next } = planReset(archived, cause, init, Date.now());
      next.generation = this.nextGeneration(key);
      // The next file first: if it cannot be created, nothing has changed.
      const created = this.createFile(next);
      this.record(tracked, loaded, [resetEntry], archived);
      return { archived: cloneSession(archived), resetEntry, current: cloneSession(created.session) };
    });
  }

  archive(key: string, cause: ResetCause): Promise<ArchiveResult> {
    return this.submit(() => {
      const tracked = this.currentForWrite(key);
      if (!tracked) throw sessionNotFound(key);
      const loaded = this.load(tracked);
      const archived = cloneSession(tracked.session);
      const resetEntry = planArchive(archived, cause, Date.now());
      this.record(tracked, loaded, [resetEntry], archived);
      return { archived: cloneSession(archived), resetEntry };
    });
  }

  delete(key: string): Promise<DeleteResult> {
    return this.submit(() => {
      const all = [...(this.byKey.get(key) ?? [])];
      // Every file is made whole first: if one cannot be, nothing is forgotten.
      for (const tracked of all) this.settleFile(tracked);
      let entries = 0;
      for (const tracked of all) entries += this.forget(tracked);
      return { sessions: all.length, entries };
    });
  }

  deleteGeneration(sessionId: string): Promise<DeleteResult> {
    return this.submit(() => {
      const tracked = this.byId.get(sessionId);
      if (!tracked) return { sessions: 0, entries: 0 };
      if (tracked.session.state === "active") throw currentNotDeletable(sessionId);
      this.settleFile(tracked);
      return { sessions: 1, entries: this.forget(tracked) };
    });
  }

  rekey(from: string, to: string): Promise<{ moved: number }> {
    return this.submit(() => {
      if (from === to) return { moved: 0 };
      const fromTracked = this.byKey.get(from) ?? [];
      const toTracked = this.byKey.get(to) ?? [];
      const plan = planRekey(
        fromTracked.map((t) => t.session),
        toTracked.map((t) => t.session),
        to,
        Date.now(),
      );
      if (plan.archived) {
        const tracked = this.byId.get(plan.archived.session.id)!;
        this.record(tracked, this.load(tracked), [plan.archived.resetEntry], plan.archived.session);
      }
      this.byKey.delete(from);
      const merged: Tracked[] = [];
      for (const session of plan.sessions) {
        const tracked = this.byId.get(session.id)!;
        tracked.session = session;
        merged.push(tracked);
        this.pending.sidecars.set(session.id, session);
      }
      this.byKey.set(to, merged);
      return { moved: fromTracked.length };
    });
  }

  async scanSessions(scan: SessionScan): Promise<Session[]> {
    this.assertOpen();
    const s = normaliseScan(scan);
    const matching: Session[] = [];
    for (const tracked of this.byId.values())
      if (matchesScan(s, tracked.session)) matching.push(tracked.session);
    return matching.sort(compareScan).slice(0, s.limit).map(cloneSession);
  }

  /** Resolves once everything submitted so far is committed and in its session file. */
  async flush(): Promise<void> {
    await this.writer.flush();
    if (!this.closed) this.guard(() => this.writeSessionFiles());
  }

  async sync(): Promise<void> {
    await this.writer.flush();
    this.assertOpen();
    if (this.writer.failed) throw this.writer.failed;
    this.checkpointOrStop();
  }

  /**
   * Checkpoints and releases everything. A store that failed (an fsync did) keeps its journal for the
   * next open to replay, and writes no index.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    await this.writer.close();
    this.closed = true;
    let checkpointed = false;
    try {
      if (!this.writer.failed) this.checkpointOrStop();
      checkpointed = !this.writer.failed;
    } finally {
      this.release(!checkpointed);
    }
    if (!checkpointed) return;
    try {
      this.saveIndex();
    } catch {
      // The index only saves the next open some reading: without it, that open reads the files.
    }
  }

  private saveIndex(): void {
    for (const tracked of this.touched) {
      if (!this.byId.has(tracked.session.id)) continue;
      const stat = this.fs.statSync(join(this.path, tracked.file));
      tracked.size = stat.size;
      tracked.mtimeMs = stat.mtimeMs;
    }
    const records: IndexedFile[] = [];
    for (const t of this.byId.values()) {
      records.push({
        file: t.file,
        size: t.size,
        mtimeMs: t.mtimeMs,
        foreign: t.foreign,
        session: t.session,
      });
    }
    saveSnapshot(join(this.metaDir, "index.json"), records, this.fs);
  }

  /**
   * Closes every file. The journal is removed only once the files hold all of it; else (`keepJournal`) it
   * stays for the next open to replay. A failure to release one thing does not keep the others.
   */
  private release(keepJournal: boolean): void {
    const attempt = (run: () => void) => {
      try {
        run();
      } catch {
        // Released as far as it goes: a journal left behind is replayed, and replaying twice changes nothing.
      }
    };
    attempt(() => this.journal.close(keepJournal));
    this.changes.close();
    for (const fd of this.fds.values()) attempt(() => this.fs.closeSync(fd));
    this.fds.clear();
  }

  /** A checkpoint outside a commit: a failed fsync stops the writer (fail-stop). */
  private checkpointOrStop(): void {
    try {
      this.checkpoint();
    } catch (error) {
      if (isSessiondError(error, "STORE_FAILED")) throw this.writer.failStop(error);
      throw asStoreError(error, this.path);
    }
  }

  // ——— writing ———

  /**
   * Runs a batch: each operation changes the in-memory state and queues its bytes; then every file
   * touched is written and (for a durable batch) fsync'd, and names are changed, before any resolves.
   */
  private commit(ops: ReadonlyArray<() => unknown>, durable: boolean): BatchResults {
    this.unwritten.nextBatch();
    let failed: SessiondError | undefined;
    const results: BatchResults = ops.map((op) => {
      try {
        return { ok: true as const, value: op() };
      } catch (error) {
        if (isSessiondError(error, "STORE_FAILED")) failed ??= error;
        return { ok: false as const, error: asStoreError(error, this.path) };
      }
    });
    try {
      if (failed) throw failed;
      this.writePending();
    } catch (error) {
      throw this.failedBatch(error);
    } finally {
      this.pending = emptyPending();
    }
    // A small durable batch (one writer appending in turn) has nothing to overlap with: fsync here,
    // which skips the thread pool's round trip; the durable barrier then finds nothing left to sync.
    // A bigger one is acknowledged by the barrier (the journal's fsync off the event loop) while the
    // next batch gathers, unless such waits have been taking nothing.
    this.fsyncOffLoop = false;
    if (durable && ops.length >= INLINE_SYNC_MAX_BATCH) {
      if (!this.fsyncPlacement.next()) this.fsyncOffLoop = true;
      else this.journal.sync();
      return results;
    }
    if (durable || this.durability === "strict") this.journal.sync();
    // A failed write keeps the bytes queued (the journal holds them); reads and checkpoints report it.
    this.writeQueued(this.unwritten.takeAll(), false);
    return results;
  }

  /**
   * What a batch that could not be written throws. Before its frame is in the journal, nothing of it is
   * on disk: memory is put back as the files (and the bytes queued for them) say, sessions the batch
   * created are forgotten, and the batch fails with nothing written. After, or when an fsync failed, the
   * outcome is unknown and the store stops (STORE_FAILED).
   */
  private failedBatch(error: unknown): SessiondError {
    if (isSessiondError(error, "STORE_FAILED")) return error;
    if (this.pending.journaled)
      return new SessiondError(
        "STORE_FAILED",
        `the batch is in the journal but its files could not follow: ${messageOf(error)}`,
        { cause: error },
      );
    try {
      this.rollBack();
    } catch (again) {
      return new SessiondError(
        "STORE_FAILED",
        `a batch failed (${messageOf(error)}) and the session files could not be read back: ${messageOf(again)}`,
        { cause: again },
      );
    }
    return asStoreError(error, this.path);
  }

  /** Memory as the disk holds it, for every session the failed batch touched (rollBack's one job). */
  private rollBack(): void {
    const { chunks, sidecars, removals, created } = this.pending;
    for (const tracked of created) {
      this.untrack(tracked);
      this.fs.rmSync(join(this.path, tracked.file), { force: true });
    }
    const isCreated = new Set(created);
    const touched = new Set<Tracked>();
    for (const { tracked } of chunks.values()) touched.add(tracked);
    for (const id of sidecars.keys()) {
      const tracked = this.byId.get(id);
      if (tracked) touched.add(tracked);
    }
    for (const tracked of removals) {
      if (!this.byId.has(tracked.session.id)) this.byId.set(tracked.session.id, tracked);
      touched.add(tracked);
    }
    for (const tracked of touched) if (!isCreated.has(tracked)) this.readBack(tracked);
    // Keys may have moved (a rekey) or lost sessions (a delete): every key's list is built again.
    this.byKey.clear();
    for (const tracked of this.byId.values()) {
      const list = this.byKey.get(tracked.session.key) ?? [];
      list.push(tracked);
      this.byKey.set(tracked.session.key, list);
    }
    for (const list of this.byKey.values()) settleKey(list);
  }

  /** The session as its file, the bytes queued for it and its sidecar say; its entries are read again when needed. */
  private readBack(tracked: Tracked): void {
    const id = tracked.session.id;
    this.loaded.delete(id);
    const queued = this.unwritten.peek(id);
    const written = this.fs.readFileSync(join(this.path, tracked.file));
    const bytes = queued ? Buffer.concat([written, ...queued]) : written;
    const { parsed } = parseSessionFile(tracked.file, bytes, tracked.session);
    if (!parsed) throw new Error(`${tracked.file} holds no session`);
    applySidecar(parsed.session, this.sidecars.read(id));
    tracked.session = parsed.session;
  }

  private writePending(): void {
    const { chunks, renames, sidecars, removals } = this.pending;
    // Before the journal, a failure fails the batch with nothing of it written: the sidecars, and for a
    // removal the checkpoint that empties the journal (its records must never bring back a file deleted
    // after them).
    for (const session of sidecars.values()) if (this.byId.has(session.id)) this.sidecars.write(session);
    if (removals.length > 0) this.checkpoint();
    const writes = [...chunks.values()];
    // One fsync of the journal acknowledges the whole batch; the session files follow without one.
    const bytes = this.journal.append(
      writes.map(({ tracked, text }) => ({ file: tracked.file, offset: tracked.size, text })),
    );
    this.pending.journaled = true;
    writes.forEach(({ tracked }, i) => {
      const written = bytes[i]!;
      this.unwritten.add(tracked, written);
      tracked.size += written.length;
      this.unsynced.add(tracked.session.id);
      this.touched.add(tracked);
    });
    for (const { tracked, to } of renames) {
      if (tracked.file === to || !this.byId.has(tracked.session.id)) continue;
      this.fs.renameSync(join(this.path, tracked.file), join(this.path, to));
      tracked.file = to;
      this.pending.dirChanged = true;
    }
    for (const { file, session } of removals) {
      this.fs.rmSync(join(this.path, file), { force: true });
      this.sidecars.remove(session.id);
      this.pending.dirChanged = true;
    }
    if (this.pending.dirChanged) fsyncDir(this.path, this.fs);
    if (this.journal.size > JOURNAL_MAX_BYTES || this.unsynced.size > MAX_UNSYNCED_FILES) {
      try {
        this.checkpoint();
      } catch (error) {
        // A file that cannot be written yet keeps its bytes queued and in the journal; a failed fsync stops.
        if (isSessiondError(error, "STORE_FAILED")) throw error;
      }
    }
    this.trimCaches();
  }

  private submit<T>(run: () => T, durable?: boolean, bytes = SMALL_WRITE_BYTES): Promise<T> {
    return this.writer.submit(run, durable, bytes);
  }

  /** Writes every session's queued bytes to its file (no fsync: the journal is the one). */
  private writeSessionFiles(): void {
    this.writeQueued(this.unwritten.takeAll(), true);
  }

  private writeQueuedOf(sessionId: string): void {
    const queued = this.unwritten.take(sessionId);
    if (queued) this.writeQueued([queued], true);
  }

  /** Once nothing is left to commit, the files catch up with the journal. */
  private writeWhenIdle(): void {
    if (this.idleWriteScheduled || this.unwritten.size === 0) return;
    this.idleWriteScheduled = true;
    setImmediate(() => {
      this.idleWriteScheduled = false;
      if (this.writer.queued === 0 && !this.closed) this.writeQueued(this.unwritten.takeAll(), false);
    });
  }

  /** A failed write puts what is left back in the queue; `rethrow` then reports it. */
  private writeQueued(queued: Unwritten[], rethrow: boolean): void {
    for (let i = 0; i < queued.length; i++) {
      const { tracked, chunks, bytes } = queued[i]!;
      if (!this.byId.has(tracked.session.id)) continue;
      let done = 0;
      try {
        const fd = this.fdFor(tracked);
        done = this.fs.writevSync(fd, chunks);
        if (done < bytes) {
          const rest = Buffer.concat(chunks).subarray(done);
          for (let at = 0; at < rest.length; ) {
            const n = this.fs.writeSync(fd, rest, at);
            at += n;
            done += n;
          }
        }
      } catch (error) {
        this.unwritten.putBack(queued[i]!, done);
        for (const rest of queued.slice(i + 1)) this.unwritten.putBack(rest, 0);
        if (rethrow) throw error;
        return;
      }
    }
  }

  /** Every session file written since the last checkpoint is fsync'd; then the journal is emptied. */
  private checkpoint(): void {
    this.writeSessionFiles();
    for (const id of this.unsynced) {
      const fd = this.fds.get(id);
      if (fd !== undefined) fsyncOrFail(this.fs, fd, this.byId.get(id)?.file ?? "a session file");
    }
    this.unsynced.clear();
    this.journal.reset();
  }

  /**
   * Appends entries to a session's file (queued) and to what memory holds of it, if it holds its entries
   * (`loaded`, which a compaction needs: the messages it keeps are written again after its marker).
   */
  private record(tracked: Tracked, loaded: Loaded | undefined, fresh: Entry[], session: Session): void {
    const titleBefore = tracked.session.title;
    for (const entry of fresh) {
      for (const line of entryLines(entry, loaded?.entries ?? fresh)) {
        this.queue(tracked, line);
        if (loaded) loaded.bytes += line.length;
      }
      if (!loaded) continue;
      loaded.entries.push(entry);
      if (entry.idempotencyKey !== undefined) loaded.byIdempotencyKey.set(entry.idempotencyKey, entry);
    }
    // Measured again (and evicted, if over the bound) with what it holds now.
    if (loaded && this.loaded.has(tracked.session.id)) this.loaded.set(tracked.session.id, loaded);
    const closing = fresh.at(-1);
    if (closing?.type === "reset") {
      session.state = "archived";
      session.archivedAt ??= closing.ts;
    }
    tracked.session = session;
    if (session.title !== titleBefore) {
      const stem = parseStem(stemOf(tracked.file));
      if (stem)
        this.pending.renames.push({ tracked, to: sessionFileName(stem.prefix, stem.seq, session.title) });
    }
  }

  /** Queues `text` for the session's file in this batch. */
  private queue(tracked: Tracked, text: string): void {
    const pending = this.pending.chunks.get(tracked.session.id);
    if (pending) pending.text += text;
    else this.pending.chunks.set(tracked.session.id, { tracked, text });
  }

  /**
   * Creates the session's file under a seq no other writer can hold: the seq is claimed by creating
   * `.sessiond/claims/{prefix}_{seq}` with O_EXCL (kept after titles rename the file, so a titled
   * file's seq is never handed out again), then the file itself is created with O_EXCL too.
   */
  private createFile(session: Session): Tracked {
    const { prefix } = fileFamily(session.agent, session.createdBy, session.key);
    let seq = (this.maxSeq.get(prefix) ?? 0) + 1;
    let fd: number;
    let file: string;
    for (; ; seq++) {
      if (!this.claim(join(this.claimsDir, `${prefix}_${seq}`), session)) continue;
      file = sessionFileName(prefix, seq);
      try {
        fd = this.fs.openSync(
          join(this.path, file),
          constants.O_RDWR | constants.O_CREAT | constants.O_EXCL | constants.O_APPEND,
        );
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      }
    }
    this.maxSeq.set(prefix, seq);
    this.fds.set(session.id, fd);
    const tracked: Tracked = { session, file, foreign: false, size: 0, mtimeMs: 0 };
    this.track(tracked);
    this.pending.created.push(tracked);
    this.queue(tracked, encodeLine(metadataLine({ ...session, title: "" })));
    this.pending.dirChanged = true;
    return tracked;
  }

  private claim(path: string, session: Session): boolean {
    let fd: number;
    try {
      fd = this.fs.openSync(path, "wx");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
      throw error;
    }
    try {
      writeClaimIdentity(this.fs, fd, session);
      return true;
    } finally {
      this.fs.closeSync(fd);
    }
  }

  /**
   * Before a session is removed, the journal is emptied of it: what it holds of this session goes to the
   * file, on disk, so that a process that dies before the file is gone leaves the session whole.
   */
  private settleFile(tracked: Tracked): void {
    const { session } = tracked;
    this.writeQueuedOf(session.id);
    if (this.unsynced.has(session.id)) fsyncOrFail(this.fs, this.fdFor(tracked), tracked.file);
  }

  /** Removes a session's file (at the end of the batch), sidecar and memory; returns its entry count. */
  private forget(tracked: Tracked): number {
    this.untrack(tracked);
    this.pending.removals.push(tracked);
    return tracked.session.entryCount;
  }

  /** Forgets a session in memory: its file, if any, stays as it is. */
  private untrack(tracked: Tracked): void {
    const { session } = tracked;
    this.byId.delete(session.id);
    const rest = (this.byKey.get(session.key) ?? []).filter((t) => t !== tracked);
    if (rest.length > 0) this.byKey.set(session.key, rest);
    else this.byKey.delete(session.key);
    this.loaded.delete(session.id);
    const fd = this.fds.get(session.id);
    if (fd !== undefined) this.fs.closeSync(fd);
    this.fds.delete(session.id);
    this.unsynced.delete(session.id);
    this.pending.chunks.delete(session.id);
    this.unwritten.take(session.id);
  }

  private fdFor(tracked: Tracked): number {
    let fd = this.fds.get(tracked.session.id);
    if (fd === undefined) {
      fd = this.fs.openSync(join(this.path, tracked.file), constants.O_RDWR | constants.O_APPEND);
      this.fds.set(tracked.session.id, fd);
    }
    return fd;
  }

  private trimCaches(): void {
    for (const id of this.fds.keys()) {
      if (this.fds.size <= 256) break;
      if (this.unsynced.has(id)) continue;
      this.fs.closeSync(this.fds.get(id)!);
      this.fds.delete(id);
    }
  }

  // ——— reading ———

  private current(key: string): Tracked | undefined {
    return this.byKey.get(key)?.find((t) => t.session.state === "active");
  }

  /**
   * The key's current session, read again first when another process appended to its file since this
   * one last did (the file is longer than this process wrote it), so new entries number after theirs.
   * Simultaneous writes from two processes to one session are not serialised: one process should own a key.
   */
  private currentForWrite(key: string): Tracked | undefined {
    const tracked = this.current(key);
    if (!tracked || this.pending.chunks.has(tracked.session.id) || !this.changes.needsCheck(tracked.file))
      return tracked;
    const fd = this.fdFor(tracked);
    if (hasSize(this.fs, fd, tracked.size - this.unwritten.bytesOf(tracked.session.id))) {
      this.changes.checked(tracked.file);
      return tracked;
    }
    // If this process still held bytes for the file, the other one wrote while both were writing to the
    // session, which nothing serialises: this process's bytes go after theirs.
    this.writeQueuedOf(tracked.session.id);
    const size = this.fs.fstatSync(fd).size;
    const { parsed, problems } = parseSessionFile(
      tracked.file,
      this.fs.readFileSync(join(this.path, tracked.file)),
      tracked.session,
    );
    for (const problem of problems) this.report(problem);
    if (!parsed) return tracked;
    applySidecar(parsed.session, this.sidecars.read(parsed.session.id));
    tracked.session = parsed.session;
    // Where this process's next bytes land (O_APPEND), torn bytes of the other writer included.
    tracked.size = size;
    this.loaded.delete(parsed.session.id);
    return this.current(key);
  }

  private nextGeneration(key: string): number {
    let max = 0;
    for (const t of this.byKey.get(key) ?? []) max = Math.max(max, t.session.generation);
    return max + 1;
  }

  /** The session's entries, read from its file the first time (torn tail cut back). */
  private load(tracked: Tracked): Loaded {
    const id = tracked.session.id;
    const cached = this.cached(id);
    if (cached) return cached;
    this.writeQueuedOf(id);
    const written = this.fs.readFileSync(join(this.path, tracked.file));
    // Inside a batch, what its earlier operations queued for the file is not written yet: read it as if it were.
    const queued = this.pending.chunks.get(id)?.text;
    const bytes = queued === undefined ? written : Buffer.concat([written, Buffer.from(queued)]);
    const { parsed } = parseSessionFile(tracked.file, bytes, tracked.session);
    const entries = parsed?.entries ?? [];
    const loaded: Loaded = { entries, byIdempotencyKey: new Map(), bytes: bytes.length };
    for (const e of entries)
      if (e.idempotencyKey !== undefined) loaded.byIdempotencyKey.set(e.idempotencyKey, e);
    this.loaded.set(id, loaded);
    return loaded;
  }

  /** The session's entries if cached, marked most recently used. */
  private cached(id: string): Loaded | undefined {
    return this.loaded.get(id);
  }

  private openIndex(): void {
    const scan = scanDirectory(this.path, this.metaDir, this.sidecars, (p) => this.report(p), this.fs);
    this.stats = { filesRead: scan.filesRead, filesFromIndex: scan.filesFromIndex };
    for (const tracked of scan.tracked) {
      this.track(tracked);
      const stem = parseStem(stemOf(tracked.file));
      if (stem) this.maxSeq.set(stem.prefix, Math.max(this.maxSeq.get(stem.prefix) ?? 0, stem.seq));
    }
    for (const list of this.byKey.values()) settleKey(list);
  }

  private report(problem: LineProblem): void {
    this.problemLog.set(this.problemCount++, problem);
    this.onProblem(problem);
  }

  private track(tracked: Tracked): void {
    this.byId.set(tracked.session.id, tracked);
    const list = this.byKey.get(tracked.session.key) ?? [];
    list.push(tracked);
    this.byKey.set(tracked.session.key, list);
  }

  private guard<T>(run: () => T): T {
    try {
      return run();
    } catch (error) {
      throw asStoreError(error, this.path);
    }
  }

  private assertOpen(): void {
    if (this.closed) throw new SessiondError("STORE_CLOSED", "the store is closed");
  }
}

function emptyPending(): PendingWrites {
  return {
    chunks: new Map(),
    renames: [],
    sidecars: new Map(),
    removals: [],
    created: [],
    dirChanged: false,
    journaled: false,
  };
}

function asStoreError(error: unknown, path: string): SessiondError {
  if (error instanceof SessiondError) return error;
  return new SessiondError(
    "STORE_UNAVAILABLE",
    `the session directory failed (${path}): ${messageOf(error)}`,
    {
      cause: error,
    },
  );
}
