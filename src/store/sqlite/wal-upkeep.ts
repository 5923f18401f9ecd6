import { statSync } from "node:fs";
import type Database from "better-sqlite3";
import { Checkpointer } from "./checkpointer.js";
import { asStoreError, isIoError, walSyncFailed } from "./sqlite-sql.js";
import { WalSync } from "./wal-sync.js";

/**
 * The writer connection checkpoints once the WAL holds this many pages (about 8 MB), and the WAL then
 * starts over from its beginning (see Checkpointer). Kept small on purpose: a commit that overwrites WAL
 * pages is made durable by an fdatasync alone, one that grows the file also commits its new size to the
 * filesystem's journal. At 10,000 pages sequential durable appends ran at 0.48-0.54x of raw SQLite, at
 * 2,000 at 0.70-0.75x; at 1,000 (SQLite's default) concurrent appends lost some 8% to the checkpoints
 * that then run inside commits.
 */
const BACKSTOP_CHECKPOINT_PAGES = 2_000;

/**
 * The WAL file's bound. SQLite truncates the WAL to it when the WAL starts over (`journal_size_limit`), so
 * a file larger than this holds more than this since the last start: the writer then waits for a
 * checkpoint of the thread that holds its own off and copies the rest itself.
 */
const WAL_LIMIT_BYTES = 10 * 1024 * 1024;

/** How long the writer waits for the checkpoint thread before it leaves the WAL to grow for a while. */
const CHECKPOINT_WAIT_MS = 5_000;

/**
 * The WAL of the writer's connection in WAL mode on a file: the fsyncs that make commits durable, and the
 * checkpoints (a thread of their own, finished by the writer at a commit boundary) that keep it small.
 * After a failed fsync the kernel may have dropped the pages: a later fsync that succeeds proves nothing,
 * so no later commit is ever called durable.
 */
export class WalUpkeep {
  private readonly walSync: WalSync;
  private readonly checkpointer: Checkpointer;
  private syncFailed: Error | undefined;

  constructor(
    private readonly db: Database.Database,
    private readonly path: string,
    private readonly onFailure: (error: unknown) => void,
    checkpointIntervalMs: number,
  ) {
    this.walSync = new WalSync(`${path}-wal`);
    db.pragma("synchronous = NORMAL");
    // Halfway to the backstop the writer finishes the thread's checkpoint, so the WAL starts over
    // before it gets there even when the thread's checkpoints run back to back.
    this.checkpointer = new Checkpointer(
      path,
      onFailure,
      checkpointIntervalMs,
      BACKSTOP_CHECKPOINT_PAGES / 2,
    );
    db.pragma(`wal_autocheckpoint = ${BACKSTOP_CHECKPOINT_PAGES}`);
    db.pragma(`journal_size_limit = ${WAL_LIMIT_BYTES}`);
  }

  /** WAL fsyncs and checkpoints done so far, for tests and metrics. */
  get fsyncs(): number {
    return this.walSync.completed;
  }

  get checkpoints(): number {
    return this.checkpointer.completed;
  }

  /** Call after every commit. */
  committed(): void {
    this.walSync.committed();
  }

  /** At a commit boundary: the checkpoint work due, and the next checkpoint asked for. */
  afterCommit(): void {
    this.finishCheckpoint();
    this.checkpointer.request();
  }

  /** Everything committed so far is on disk when this returns (an fsync on the calling thread). */
  syncNow(): void {
    if (this.syncFailed) throw this.syncFailed;
    try {
      this.walSync.syncNow();
    } catch (error) {
      throw this.failedSync(error);
    }
  }

  /** Everything committed so far is on disk once this resolves (an fsync on the thread pool). */
  durableBarrier(): Promise<void> {
    if (this.syncFailed) return Promise.reject(this.syncFailed);
    return this.walSync.sync().catch((error: unknown) => Promise.reject(this.failedSync(error)));
  }

  /**
   * Everything committed so far reaches the disk: the WAL's fsync, then a checkpoint. The fsync is not
   * left to the checkpoint, which syncs nothing when it has nothing to copy or the checkpoint thread's
   * holds it off (busy, which SQLite reports as a result, not an error).
   */
  async sync(): Promise<void> {
    this.walSync.committed();
    await this.durableBarrier();
    try {
      this.db.pragma("wal_checkpoint(PASSIVE)");
    } catch (error) {
      const cause = (error as { cause?: unknown }).cause ?? error;
      throw isIoError(cause) ? walSyncFailed(this.path, cause) : asStoreError(error);
    }
  }

  async close(): Promise<void> {
    await this.walSync.close();
    await this.checkpointer.close();
  }

  private failedSync(error: unknown): Error {
    this.syncFailed ??= walSyncFailed(this.path, error);
    return this.syncFailed;
  }

  /** Copies what the checkpoint thread left, so the next commit starts the WAL over. */
  private finishCheckpoint(): void {
    if (!this.checkpointer.remainderDue && !this.walOverLimit()) return;
    try {
      this.db.pragma("wal_checkpoint(PASSIVE)");
    } catch (error) {
      const cause = (error as { cause?: unknown }).cause ?? error;
      // Busy only means a later checkpoint does it; a failed fsync stops the store.
      if (isIoError(cause)) this.onFailure(walSyncFailed(this.path, cause));
    }
    this.checkpointer.finished();
  }

  /** The WAL passed its bound while the thread's checkpoint held the writer's own off: waits for that one. */
  private walOverLimit(): boolean {
    if (!this.checkpointer.busy) return false;
    const size = statSync(`${this.path}-wal`, { throwIfNoEntry: false })?.size ?? 0;
    return size > WAL_LIMIT_BYTES && this.checkpointer.waitIdle(CHECKPOINT_WAIT_MS);
  }
}
