import { Worker } from "node:worker_threads";
import { SessiondError } from "../../model/errors.js";
import {
  receiveError,
  type WriterAnswers,
  type WriterInit,
  type WriterMessage,
  type WriterRequest,
} from "./writer-protocol.js";

interface Waiting {
  resolve: (value: never) => void;
  reject: (error: unknown) => void;
}

/**
 * The reading thread's handle on a store's writer thread (writer-thread.ts): started at the first write,
 * so a process that only reads never starts one. It keeps the process alive only while a request waits.
 * A thread that dies fails every request waiting and every later one with STORE_FAILED: what it was
 * committing may or may not be on disk.
 */
export class WriterClient {
  private worker: Worker | undefined;
  private nextId = 0;
  private readonly waiting = new Map<number, Waiting>();
  private dead: SessiondError | undefined;
  private closing: Promise<void> | undefined;

  constructor(
    private readonly script: string,
    private readonly init: WriterInit,
    /** A failure outside any request (a checkpoint's fsync, the thread's death): the store stops. */
    private readonly onFailure: (error: SessiondError) => void,
  ) {}

  request<K extends WriterRequest["op"]>(
    request: Extract<WriterRequest, { op: K }>,
  ): Promise<WriterAnswers[K]> {
    if (this.dead) return Promise.reject(this.dead);
    this.worker ??= this.start();
    const worker = this.worker;
    const id = this.nextId++;
    return new Promise<WriterAnswers[K]>((resolve, reject) => {
      this.waiting.set(id, { resolve: resolve as (value: never) => void, reject });
      if (this.waiting.size === 1) worker.ref();
      // As JSON text: V8's structured clone of a batch's nested objects cost the event loop ~50 µs a
      // commit, JSON.stringify a tenth of that (a string crosses as one copy).
      worker.postMessage(`${id} ${JSON.stringify(request)}`);
    });
  }

  /** Closes the thread, after what it was asked before; nothing to do when it never started. */
  close(failed: boolean): Promise<void> {
    this.closing ??= this.worker
      ? this.request({ op: "close", failed }).then(
          () => undefined,
          () => undefined,
        )
      : Promise.resolve();
    return this.closing;
  }

  private start(): Worker {
    // None of the parent's flags (a loader, `--input-type`, a profiler): the program is plain built JS.
    const worker = new Worker(this.script, { workerData: this.init, execArgv: [] });
    worker.unref();
    worker.on("message", (message: WriterMessage) => {
      if ("failure" in message) {
        this.onFailure(receiveError(message.failure));
        return;
      }
      const waiting = this.waiting.get(message.id);
      if (!waiting) return;
      this.waiting.delete(message.id);
      if (this.waiting.size === 0) worker.unref();
      if ("error" in message) waiting.reject(receiveError(message.error));
      else waiting.resolve(message.value as never);
    });
    const died = (cause: unknown) => {
      if (this.dead) return;
      const closed = this.closing !== undefined && this.waiting.size === 0;
      this.dead = new SessiondError(
        "STORE_FAILED",
        `the writer thread of ${this.init.path} stopped${cause instanceof Error ? `: ${cause.message}` : ""}; the outcome of its last writes is unknown`,
        { details: { outcome: "unknown" } },
      );
      for (const waiting of this.waiting.values()) waiting.reject(this.dead);
      this.waiting.clear();
      if (!closed) this.onFailure(this.dead);
    };
    worker.on("error", died);
    worker.on("exit", (code) => died(code === 0 ? undefined : new Error(`exit code ${code}`)));
    return worker;
  }
}
