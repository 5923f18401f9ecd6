import { join } from "node:path";
import { isSessiondError } from "../../model/errors.js";
import type { Session } from "../../model/session.js";
import type { Tracked } from "./directory-scan.js";
import { type FileSystem, fsyncDir, fsyncOrFail } from "./durable-fs.js";
import { FsyncPlacement } from "./fsync-placement.js";
import { Journal } from "./journal.js";
import type { SessionFiles } from "./session-files.js";
import type { Sidecars } from "./sidecar.js";
import { type Unwritten, UnwrittenBytes } from "./unwritten-bytes.js";

/** What a batch will write once its groups have been applied. */
export interface PendingWrites {
  chunks: Map<string, { tracked: Tracked; text: string }>;
  sidecars: Map<string, Session>;
  removals: Tracked[];
  /** Sessions whose files this batch created. */
  created: Tracked[];
  dirChanged: boolean;
  /** Whether the batch's frame is in the journal: past this point a failure cannot be rolled back. */
  journaled: boolean;
}

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
 * The JSONL driver's write path: a batch's bytes per session file go into the journal as one frame
 * (journal.ts), whose fsync acknowledges the batch; the session files follow without an fsync (a busy
 * store's a few batches later, in the shadow of a later fsync) and are fsync'd at checkpoints, which then
 * empty the journal. This process writes a session's bytes to its file before it reads the file.
 */
export class FileWrites {
  readonly journal: Journal;
  /** Files written since open: their size and mtime are read again for the index at close. */
  readonly touched = new Set<Tracked>();
  /** What the batch being committed queued; empty between batches. */
  pending: PendingWrites = emptyPending();
  private readonly unwritten = new UnwrittenBytes(UNWRITTEN_MAX_BYTES, UNWRITTEN_MAX_TOTAL_BYTES);
  private readonly unsynced = new Set<string>();
  private readonly fsyncPlacement = new FsyncPlacement(FSYNC_PROBE_EVERY);
  private idleWriteScheduled = false;
  private closed = false;

  constructor(
    private readonly dir: string,
    metaDir: string,
    private readonly files: SessionFiles,
    private readonly sidecars: Sidecars,
    private readonly fs: FileSystem,
    /** Whether nothing waits to be committed (the idle write runs only then). */
    private readonly idle: () => boolean,
  ) {
    this.journal = new Journal(metaDir, fs);
  }

  beginBatch(): void {
    this.unwritten.nextBatch();
    this.pending = emptyPending();
  }

  endBatch(): void {
    this.pending = emptyPending();
  }

  /** Queues `text` for the session's file in this batch. */
  queue(tracked: Tracked, text: string): void {
    const pending = this.pending.chunks.get(tracked.session.id);
    if (pending) pending.text += text;
    else this.pending.chunks.set(tracked.session.id, { tracked, text });
  }

  /** The session's file as this process wrote it: its size less what is still queued for it. */
  writtenSize(tracked: Tracked): number {
    return tracked.size - this.unwritten.bytesOf(tracked.session.id);
  }

  /** The bytes journaled for the session that are not in its file yet, left queued. */
  queuedOf(id: string): readonly Buffer[] | undefined {
    return this.unwritten.peek(id);
  }

  /**
   * Writes the batch: sidecars, the journal's frame, then removals. Before the frame is in
   * the journal a failure leaves nothing of the batch written (the caller rolls memory back); after it,
   * the batch stands and only a failed fsync stops the store.
   */
  write(): void {
    const { chunks, sidecars, removals } = this.pending;
    // Before the journal, a failure fails the batch with nothing of it written: the sidecars, and for a
    // removal the checkpoint that empties the journal (its records must never bring back a file deleted
    // after them).
    for (const session of sidecars.values()) if (this.files.get(session.id)) this.sidecars.write(session);
    if (removals.length > 0) this.checkpoint();
    const writes = [...chunks.values()];
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
    for (const { file, session } of removals) {
      this.fs.rmSync(join(this.dir, file), { force: true });
      this.sidecars.remove(session.id);
      this.pending.dirChanged = true;
    }
    if (this.pending.dirChanged) fsyncDir(this.dir, this.fs);
    if (this.journal.size > JOURNAL_MAX_BYTES || this.unsynced.size > MAX_UNSYNCED_FILES) {
      try {
        this.checkpoint();
      } catch (error) {
        // A file that cannot be written yet keeps its bytes queued and in the journal; a failed fsync stops.
        if (isSessiondError(error, "STORE_FAILED")) throw error;
      }
    }
    this.files.trim(this.unsynced);
  }

  /** A batch acknowledged without the barrier: its frame fsync'd (a strict store) and the files written. */
  settleNow(sync: boolean): void {
    if (sync) this.journal.sync();
    // A failed write keeps the bytes queued (the journal holds them); reads and checkpoints report it.
    this.writeQueued(this.unwritten.takeAll(), false);
  }

  /**
   * The durable barrier: the journal's fsync, off the event loop unless such waits have been taking no
   * appends (fsync-placement.ts); meanwhile, the bytes of earlier batches that have waited long enough go
   * to their files. A failed write keeps them queued (the journal holds them).
   */
  barrier(): Promise<void> {
    let offLoop = false;
    if (this.journal.needsSync) {
      if (!this.fsyncPlacement.next()) offLoop = true;
      else {
        try {
          this.journal.sync();
        } catch (error) {
          return Promise.reject(error);
        }
      }
    }
    const synced = this.journal.syncAsync();
    this.writeQueued(this.unwritten.takeDue(UNWRITTEN_MAX_BATCHES), false);
    return synced.then(() => {
      if (offLoop) this.fsyncPlacement.waited(!this.idle());
      this.writeWhenIdle();
    });
  }

  /** Writes every session's queued bytes to its file (no fsync: the journal is the one). */
  writeAll(): void {
    this.writeQueued(this.unwritten.takeAll(), true);
  }

  writeQueuedOf(sessionId: string): void {
    const queued = this.unwritten.take(sessionId);
    if (queued) this.writeQueued([queued], true);
  }

  /** Every session file written since the last checkpoint is fsync'd; then the journal is emptied. */
  checkpoint(): void {
    this.writeAll();
    for (const id of this.unsynced) {
      const fd = this.files.openFd(id);
      if (fd !== undefined) fsyncOrFail(this.fs, fd, this.files.get(id)?.file ?? "a session file");
    }
    this.unsynced.clear();
    this.journal.reset();
  }

  /**
   * What the journal holds of this session goes to its file, on disk: before the file is removed or
   * replaced, so that a process that dies meanwhile leaves the session whole.
   */
  settleFile(tracked: Tracked): void {
    const { session } = tracked;
    this.writeQueuedOf(session.id);
    if (this.unsynced.has(session.id)) {
      fsyncOrFail(this.fs, this.files.fdFor(tracked), tracked.file);
      this.unsynced.delete(session.id);
    }
  }

  /** The session is gone from memory: nothing more is written for it. */
  forget(id: string): void {
    this.unsynced.delete(id);
    this.pending.chunks.delete(id);
    this.unwritten.take(id);
  }

  /** Stops the idle write; the journal is removed, or kept (`keep`) for the next open to replay. */
  close(keep: boolean): void {
    this.closed = true;
    this.journal.close(keep);
  }

  /** Once nothing is left to commit, the files catch up with the journal. */
  private writeWhenIdle(): void {
    if (this.idleWriteScheduled || this.unwritten.size === 0) return;
    this.idleWriteScheduled = true;
    setImmediate(() => {
      this.idleWriteScheduled = false;
      if (this.idle() && !this.closed) this.writeQueued(this.unwritten.takeAll(), false);
    });
  }

  /** A failed write puts what is left back in the queue; `rethrow` then reports it. */
  private writeQueued(queued: Unwritten[], rethrow: boolean): void {
    for (let i = 0; i < queued.length; i++) {
      const { tracked, chunks, bytes } = queued[i]!;
      if (!this.files.get(tracked.session.id)) continue;
      let done = 0;
      try {
        const fd = this.files.fdFor(tracked);
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
}

function emptyPending(): PendingWrites {
  return {
    chunks: new Map(),
    sidecars: new Map(),
    removals: [],
    created: [],
    dirChanged: false,
    journaled: false,
  };
}
