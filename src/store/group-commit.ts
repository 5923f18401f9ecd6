import { isSessiondError, SessiondError } from "../model/errors.js";

interface Pending<Op> {
  run: Op;
  durable: boolean;
  bytes: number;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * A durable batch smaller than this (one writer appending in turn, say) is made durable on the event loop
 * by the store's commit: there is nothing to overlap with, and a hand-off to the thread pool and back would
 * cost more than the fsync. Bigger batches are acknowledged by the durable barrier while the next gathers.
 */
export const INLINE_SYNC_MAX_BATCH = 8;

export interface GroupCommitOptions<Op = () => unknown> {
  /** 0: commit on the next turn of the event loop; otherwise wait this long to gather more. */
  intervalMs: number;
  /** The most operations in one transaction. */
  maxBatch: number;
  /**
   * Makes a committed batch durable. Without it, a durable batch must be on disk when `commit` returns;
   * with it, a durable batch's operations resolve only once the barrier has, and the next batch is
   * committed when it has.
   */
  durableBarrier?: () => Promise<void>;
  /** The most bytes (as the submitters estimate them) waiting to be committed; default 64 MiB. */
  maxQueuedBytes?: number;
  /** The most operations waiting to be committed; default 100,000. */
  maxQueued?: number;
  /**
   * How many batches may be committing at once (default 1). Above 1 (a database across a socket, one
   * connection per batch), the next batch is planned and sent while the previous one's COMMIT is in
   * flight, from the operations whose keys no batch in flight holds (`keysOf`), and a burst is split so
   * that there is a next batch to overlap with.
   */
  maxInFlight?: number;
  /** The keys an operation writes, known before it is planned; undefined: it waits for a batch of its own. */
  keysOf?: (op: Op) => readonly string[] | undefined;
}

/** A burst of fewer operations than this is not split between batches in flight. */
export const PIPELINE_SPLIT_MIN = 16;

export const DEFAULT_MAX_QUEUED_BYTES = 64 * 1024 * 1024;
export const DEFAULT_MAX_QUEUED = 100_000;

/**
 * The `STORE_BUSY` refusal for one more write of `bytes` to a queue holding `queued` writes of `queuedBytes`,
 * or undefined when it fits. One write always fits an empty queue, however big.
 */
export function queueFull(
  queued: number,
  queuedBytes: number,
  bytes: number,
  limits: { maxQueuedBytes?: number; maxQueued?: number } = {},
): SessiondError | undefined {
  const maxBytes = limits.maxQueuedBytes ?? DEFAULT_MAX_QUEUED_BYTES;
  const maxOps = limits.maxQueued ?? DEFAULT_MAX_QUEUED;
  if (queued === 0 || (queuedBytes + bytes <= maxBytes && queued < maxOps)) return undefined;
  return new SessiondError(
    "STORE_BUSY",
    `the store's write queue is full (${queued} writes, ${queuedBytes} bytes waiting); retry later`,
    { details: { queued, queuedBytes } },
  );
}

export type BatchResult = { ok: true; value: unknown } | { ok: false; error: unknown };

/**
 * Runs a batch: each op's result or error, in order. `durable` is true when any op must be on disk when
 * acknowledged. Throws if the batch as a whole could not commit. A commit that answers with a Promise (a
 * database across a socket) holds the writer until it settles: batches never overlap.
 */
export type CommitBatch<Op = () => unknown> = (
  ops: ReadonlyArray<Op>,
  durable: boolean,
) => BatchResult[] | Promise<BatchResult[]>;

/**
 * One writer for the whole store. Operations from every session queue up and are committed together
 * in one transaction, so one fsync acknowledges many appends.
 *
 * Fail-stop: once a commit could not be made durable (the barrier rejected, or the store's commit threw
 * `STORE_FAILED` for a failed inline fsync), every write is refused until the store is reopened. After an
 * fsync error the kernel may have dropped the dirty pages, so a later fsync that "succeeds" proves nothing.
 */
export class GroupCommit<Op = () => unknown> {
  private queue: Array<Pending<Op>> = [];
  private queuedBytes = 0;
  private scheduled = false;
  private closed = false;
  private failure: SessiondError | undefined;
  private idle: Array<() => void> = [];
  private readonly batchSizes: number[] = [];
  private readonly listeners = new Set<(operations: number) => void>();
  /** Committed batches waiting for their durable barrier. */
  private readonly settling = new Set<Promise<void>>();
  /** Pipelined batches (maxInFlight > 1) not settled yet, and the keys they hold (how many batches hold each). */
  private inFlight = 0;
  private readonly busyKeys = new Map<string, number>();
  /** A batch in flight holds an operation of unknown keys: nothing else starts until it settles. */
  private exclusive = false;

  constructor(
    private readonly commit: CommitBatch<Op>,
    private readonly options: GroupCommitOptions<Op>,
  ) {}

  /**
   * Queues `run` for the next batch. `bytes` is what the operation will write, roughly: the queue refuses
   * more than `maxQueuedBytes` (or `maxQueued` operations) waiting with `STORE_BUSY`.
   */
  submit<T>(run: Op, durable = true, bytes = 0): Promise<T> {
    if (this.closed) return Promise.reject(new SessiondError("STORE_CLOSED", "the store is closed"));
    if (this.failure) return Promise.reject(refused(this.failure));
    const full = queueFull(this.queue.length, this.queuedBytes, bytes, this.options);
    if (full) return Promise.reject(full);
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ run, durable, bytes, resolve: resolve as (value: unknown) => void, reject });
      this.queuedBytes += bytes;
      this.schedule();
    });
  }

  /** Operations submitted and not yet committed. */
  get queued(): number {
    return this.queue.length;
  }

  /** The failure that stopped the store, if one did. */
  get failed(): SessiondError | undefined {
    return this.failure;
  }

  /**
   * Stops the writer for good: what is queued is refused (it was never written), and so is every later
   * submit. For a store that finds its files can no longer be trusted outside a commit (a checkpoint's fsync).
   */
  failStop(cause: unknown): SessiondError {
    if (!this.failure) {
      this.failure = isSessiondError(cause, "STORE_FAILED")
        ? cause
        : new SessiondError(
            "STORE_FAILED",
            `the store could not make its writes durable: ${messageOf(cause)}`,
            {
              cause,
            },
          );
      const waiting = this.queue.splice(0);
      this.queuedBytes = 0;
      for (const p of waiting) p.reject(refused(this.failure));
      for (const resolve of this.idle.splice(0)) resolve();
    }
    return this.failure;
  }

  /** Resolves when everything submitted so far has been committed (or failed). */
  async flush(): Promise<void> {
    if (this.queue.length > 0) await new Promise<void>((resolve) => this.idle.push(resolve));
    if (this.settling.size > 0) await Promise.allSettled([...this.settling]);
  }

  async close(): Promise<void> {
    await this.flush();
    this.closed = true;
  }

  /** Calls `listener` with the number of operations in every batch committed from now on. */
  onBatch(listener: (operations: number) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Sizes of recent batches (the last 1,000), for metrics and benchmarks. */
  recentBatchSizes(): readonly number[] {
    return this.batchSizes;
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    if (this.options.intervalMs > 0) setTimeout(() => this.drain(), this.options.intervalMs);
    else setImmediate(() => this.drain());
  }

  private drain(): void {
    this.scheduled = false;
    if ((this.options.maxInFlight ?? 1) > 1) {
      this.drainPipelined();
      return;
    }
    // While a batch waits for the disk, the queue keeps filling: the next transaction takes all of it
    // once the fsync is back (one commit and one fsync for many appends, instead of one per tick).
    if (this.settling.size > 0 && this.queue.length > 0) return;
    const batch = this.queue.splice(0, this.options.maxBatch);
    this.start(batch);
  }

  private start(batch: Array<Pending<Op>>, keys?: Set<string>): void {
    for (const p of batch) this.queuedBytes -= p.bytes;
    if (batch.length > 0) {
      if (keys) this.track(keys);
      this.runBatch(batch, keys);
    }
    if (this.queue.length > 0) this.schedule();
    else for (const resolve of this.idle.splice(0)) resolve();
  }

  /**
   * Up to `maxInFlight` batches at once, none sharing a key with another in flight, each key's operations
   * in the order submitted (one held back holds back the later ones on its keys; one of unknown keys holds
   * back everything after it, and runs alone).
   */
  private drainPipelined(): void {
    const limit = this.options.maxInFlight ?? 1;
    if (this.queue.length === 0 || this.exclusive || this.inFlight >= limit) {
      if (this.queue.length === 0) this.start([]);
      return;
    }
    const keysOf = this.options.keysOf ?? (() => undefined);
    let room = this.options.maxBatch;
    // A burst with nothing in flight is split, so that the next part is planned while this one commits.
    if (this.inFlight === 0 && this.queue.length >= PIPELINE_SPLIT_MIN)
      room = Math.min(room, Math.ceil(this.queue.length / limit));
    const taken: Array<Pending<Op>> = [];
    const kept: Array<Pending<Op>> = [];
    const keys = new Set<string>();
    const held = new Set<string>();
    let exclusive = false;
    for (let i = 0; i < this.queue.length; i++) {
      const p = this.queue[i]!;
      const opKeys = taken.length < room && !exclusive ? keysOf(p.run) : undefined;
      if (opKeys === undefined) {
        // Alone, and only with nothing in flight: it may write any key.
        if (taken.length === 0 && this.inFlight === 0 && !exclusive && room > 0) {
          taken.push(p);
          exclusive = true;
          continue;
        }
        kept.push(...this.queue.slice(i));
        break;
      }
      if (opKeys.some((k) => this.busyKeys.has(k) || held.has(k))) {
        for (const k of opKeys) held.add(k);
        kept.push(p);
        continue;
      }
      for (const k of opKeys) keys.add(k);
      taken.push(p);
    }
    this.queue = kept;
    // Everything left waits on a key in flight: that batch settling schedules the next drain.
    if (taken.length === 0) return;
    if (exclusive) this.exclusive = true;
    this.start(taken, keys);
  }

  private track(keys: Set<string>): void {
    this.inFlight++;
    for (const k of keys) this.busyKeys.set(k, (this.busyKeys.get(k) ?? 0) + 1);
  }

  private untrack(keys: Set<string>): void {
    this.inFlight--;
    this.exclusive = false;
    for (const k of keys) {
      const n = this.busyKeys.get(k)!;
      if (n <= 1) this.busyKeys.delete(k);
      else this.busyKeys.set(k, n - 1);
    }
  }

  private runBatch(batch: Array<Pending<Op>>, keys?: Set<string>): void {
    this.batchSizes.push(batch.length);
    if (this.batchSizes.length > 1000) this.batchSizes.splice(0, this.batchSizes.length - 1000);
    let results: ReturnType<CommitBatch<Op>>;
    const durable = batch.some((p) => p.durable);
    try {
      results = this.commit(
        batch.map((p) => p.run),
        durable,
      );
    } catch (error) {
      if (keys) this.untrack(keys);
      this.batchFailed(batch, error);
      return;
    }
    if (results instanceof Promise) {
      this.hold(
        results.then(
          (settled) => {
            if (keys) this.untrack(keys);
            this.committed(batch, settled, durable);
          },
          (error: unknown) => {
            if (keys) this.untrack(keys);
            this.batchFailed(batch, error);
          },
        ),
      );
    } else {
      if (keys) this.untrack(keys);
      this.committed(batch, results, durable);
    }
  }

  private batchFailed(batch: ReadonlyArray<Pending<Op>>, error: unknown): void {
    if (isSessiondError(error, "STORE_FAILED")) {
      const failure = this.failStop(error);
      for (const p of batch) p.reject(outcomeUnknown(failure));
      return;
    }
    for (const p of batch) p.reject(storeFailure("the store could not commit", error));
  }

  private committed(batch: ReadonlyArray<Pending<Op>>, results: BatchResult[], durable: boolean): void {
    for (const listener of this.listeners) listener(batch.length);
    const barrier = durable ? this.options.durableBarrier : undefined;
    if (!barrier) {
      settle(batch, results);
      return;
    }
    this.hold(
      barrier().then(
        () => settle(batch, results),
        (error: unknown) => {
          const failure = this.failStop(error);
          for (const p of batch) p.reject(outcomeUnknown(failure));
        },
      ),
    );
  }

  /** The next batch waits for `settling` (a durable barrier, or a commit that answered with a Promise). */
  private hold(settling: Promise<void>): void {
    this.settling.add(settling);
    void settling.finally(() => {
      this.settling.delete(settling);
      if (this.queue.length > 0) this.schedule();
    });
  }
}

function settle<Op>(batch: ReadonlyArray<Pending<Op>>, results: BatchResult[]): void {
  batch.forEach((p, i) => {
    const result = results[i];
    if (result?.ok) p.resolve(result.value);
    else p.reject(result?.error);
  });
}

/** A write that was committed but may or may not be on disk: retrying it is safe only when it is idempotent. */
function outcomeUnknown(failure: SessiondError): SessiondError {
  return new SessiondError(
    "STORE_FAILED",
    `the outcome of this write is unknown: ${failure.message}; the store refuses writes until it is reopened`,
    { cause: failure, details: { outcome: "unknown" } },
  );
}

/** A write refused, never started, because the store stopped earlier. */
function refused(failure: SessiondError): SessiondError {
  return new SessiondError(
    "STORE_FAILED",
    `the store stopped after a failed fsync and refuses writes until it is reopened: ${failure.message}`,
    { cause: failure, details: { outcome: "not-written" } },
  );
}

function storeFailure(what: string, error: unknown): SessiondError {
  if (error instanceof SessiondError) return error;
  return new SessiondError("STORE_UNAVAILABLE", `${what}: ${messageOf(error)}`, { cause: error });
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
