import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";

/**
 * The worker's whole program, kept inline so that it runs the same from TypeScript sources (tests) and
 * from the build. It checkpoints on request, on its own connection, and answers when done.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driver);
const db = new Database(workerData.path);
const state = workerData.state;
db.pragma("busy_timeout = 0");
parentPort.on("message", (message) => {
  if (message === "close") {
    db.close();
    parentPort.close();
    return;
  }
  let reply;
  try {
    const [result] = db.pragma("wal_checkpoint(PASSIVE)");
    reply = "done:" + (result ? result.log : 0);
  } catch (error) {
    reply = String(error && error.code).startsWith("SQLITE_IOERR") ? "io:" + error.message : "failed";
  }
  Atomics.store(state, 0, 0);
  Atomics.notify(state, 0);
  parentPort.postMessage(reply);
});
`;

/**
 * Copies the WAL into the database file on a thread of its own. In WAL mode SQLite checkpoints inside the
 * commit that crosses `wal_autocheckpoint` pages, writing and fsyncing the database file while every
 * request waits; here the bulk of that work runs beside the event loop.
 *
 * The WAL starts over from its beginning only at a write that finds every frame copied, and this thread's
 * checkpoint copies just the frames committed before it began. So once one here finds the WAL holding
 * `restartFrames` or more, the writer copies the remainder on its own connection at its next commit
 * boundary (`remainderDue`, then `finished()`), and no new checkpoint starts here before that: otherwise,
 * under continuous load, back-to-back checkpoints here keep the main connection's own autocheckpoint
 * (which a running one turns away as busy) from ever completing, and the WAL grows without bound.
 *
 * A checkpoint here that runs long (the thread starved of CPU on a loaded machine) turns the writer's own
 * checkpoints away as busy too; `waitIdle` lets the writer wait for it, as SQLite's checkpoint inside
 * COMMIT would have made it wait, once the WAL has grown past its bound.
 */
export class Checkpointer {
  private worker: Worker | undefined;
  private running = false;
  private wanted = false;
  private broken = false;
  private failed = false;
  private timer: NodeJS.Timeout | undefined;
  private closing: Promise<void> | undefined;
  private lastAt = Number.NEGATIVE_INFINITY;
  /** 1 while the thread checkpoints: the thread clears it before it answers, so the writer can wait on it. */
  private readonly state = new Int32Array(new SharedArrayBuffer(4));
  /** A checkpoint here finished; the writer's own copies what was committed meanwhile. */
  remainderDue = false;
  /** Checkpoints finished, for tests and metrics. */
  completed = 0;

  constructor(
    private readonly path: string,
    private readonly onIoError: (error: Error) => void = () => undefined,
    private readonly minIntervalMs = 200,
    /** WAL frames past which the writer finishes a checkpoint of this thread, and the WAL starts over. */
    private readonly restartFrames = 1_000,
  ) {}

  /** Started on the first request, so that a store that is only read never starts a thread. */
  private start(): Worker {
    const driver = createRequire(import.meta.url).resolve("better-sqlite3");
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { path: this.path, driver, state: this.state },
    });
    worker.unref();
    worker.on("message", (message: string) => {
      this.running = false;
      if (message.startsWith("done:")) {
        this.completed++;
        this.remainderDue = Number(message.slice(5)) >= this.restartFrames;
      }
      // A busy or locked file only means the next checkpoint tries again; an I/O error (a failed fsync
      // of the WAL or the database) means the file can no longer be trusted.
      if (message.startsWith("io:")) {
        // Stops checkpointing; the thread itself is stopped by close(), as always.
        this.failed = true;
        this.onIoError(new Error(`checkpoint of ${this.path}: ${message.slice(3)}`));
        return;
      }
      if (this.wanted && !this.remainderDue) {
        this.wanted = false;
        this.request();
      }
    });
    // A worker that cannot start, or dies, only means checkpoints fall back to the main connection.
    worker.on("error", () => {
      this.broken = true;
      Atomics.store(this.state, 0, 0);
    });
    return worker;
  }

  /** Whether a checkpoint of the thread is under way. */
  get busy(): boolean {
    return this.running && !this.broken && Atomics.load(this.state, 0) === 1;
  }

  /**
   * Blocks the calling thread until the thread's checkpoint is done, for at most `timeoutMs`; true when it
   * is (or none ran).
   */
  waitIdle(timeoutMs: number): boolean {
    return !this.busy || Atomics.wait(this.state, 0, 1, timeoutMs) !== "timed-out";
  }

  /** The writer copied the remainder of the last checkpoint on its own connection. */
  finished(): void {
    this.remainderDue = false;
  }

  /** Asks for a checkpoint; requests while one runs, or within `minIntervalMs` of the last, coalesce. */
  request(): void {
    if (this.closing || this.broken || this.failed) return;
    if (this.running || this.remainderDue) {
      this.wanted = true;
      return;
    }
    const wait = this.lastAt + this.minIntervalMs - performance.now();
    if (wait > 0) {
      this.timer ??= setTimeout(() => {
        this.timer = undefined;
        this.request();
      }, wait).unref();
      return;
    }
    this.worker ??= this.start();
    this.running = true;
    Atomics.store(this.state, 0, 1);
    this.lastAt = performance.now();
    this.worker.postMessage("checkpoint");
  }

  close(): Promise<void> {
    clearTimeout(this.timer);
    const worker = this.worker;
    this.closing ??=
      this.broken || !worker
        ? Promise.resolve()
        : new Promise<void>((resolve) => {
            // Held open until the thread is gone, so that awaiting this keeps the process alive.
            worker.ref();
            worker.once("exit", () => resolve());
            worker.postMessage("close");
          });
    return this.closing;
  }
}
