import { close, fdatasync, fdatasyncSync, openSync } from "node:fs";

/**
 * Makes committed WAL frames durable off the event loop. SQLite's `synchronous=FULL` in WAL mode is
 * `NORMAL` plus an fsync of the WAL after every commit, done inside COMMIT on the calling thread; here
 * that fsync runs on libuv's thread pool while the next batch is built. fsync applies to the file, not
 * the descriptor, so a descriptor of our own flushes what SQLite wrote through its own.
 *
 * A small batch (one writer appending in turn) has nothing to overlap with: `syncNow` fsyncs it on the
 * calling thread, which skips the thread pool's round trip, and the barrier then finds nothing to sync.
 */
export class WalSync {
  private fd: number | undefined;
  private running: Promise<void> | undefined;
  private next: Promise<void> | undefined;
  /** Whether a commit came after the last fsync began. */
  private dirty = false;
  /** fsyncs completed, for tests and metrics. */
  completed = 0;

  constructor(private readonly walPath: string) {}

  /** Call after every commit. */
  committed(): void {
    this.dirty = true;
  }

  /** Everything committed so far is on disk when this returns. */
  syncNow(): void {
    if (!this.dirty) return;
    this.fd ??= openSync(this.walPath, "r");
    this.dirty = false;
    try {
      fdatasyncSync(this.fd);
    } catch (error) {
      this.dirty = true;
      throw error;
    }
    this.completed++;
  }

  /** Resolves once everything committed before the call is on disk. */
  sync(): Promise<void> {
    // Nothing committed since the fsync in flight (or the last one) began: that one covers the call.
    if (!this.dirty) return this.running ?? Promise.resolve();
    if (!this.running) return this.start();
    // The fsync in flight may have begun before the latest commit: one more, begun after it, covers both.
    if (!this.next) {
      const again = () => {
        this.next = undefined;
        return this.start();
      };
      this.next = this.running.then(again, again);
    }
    return this.next;
  }

  async close(): Promise<void> {
    await Promise.allSettled([this.running, this.next]);
    const fd = this.fd;
    this.fd = undefined;
    if (fd !== undefined) await new Promise<void>((resolve) => close(fd, () => resolve()));
  }

  private start(): Promise<void> {
    this.dirty = false;
    const run = this.fsync().finally(() => {
      if (this.running === run) this.running = undefined;
    });
    this.running = run;
    return run;
  }

  /** The callback API: its call costs the event loop about half what `FileHandle.datasync()` does. */
  private fsync(): Promise<void> {
    return new Promise((resolve, reject) => {
      let fd: number;
      try {
        this.fd ??= openSync(this.walPath, "r");
        fd = this.fd;
      } catch (error) {
        return reject(error);
      }
      fdatasync(fd, (error) => {
        if (error) {
          this.dirty = true;
          if (this.fd === fd) this.fd = undefined;
          close(fd, () => undefined);
          return reject(error);
        }
        this.completed++;
        resolve();
      });
    });
  }
}
