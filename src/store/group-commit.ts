import { SessiondError } from "../model/errors.js";

interface Pending {
  run: () => unknown;
  durable: boolean;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * A durable batch smaller than this (one writer appending in turn, say) is made durable on the event loop
 * by the store's commit: there is nothing to overlap with, and a hand-off to the thread pool and back would
 * cost more than the fsync. Bigger batches are acknowledged by the durable barrier while the next gathers.
 */
export const INLINE_SYNC_MAX_BATCH = 8;

export interface GroupCommitOptions {
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
}

/**
 * Runs a batch: each op's result or error, in order. `durable` is true when any op must be on disk when
 * acknowledged. Throws if the batch as a whole could not commit.
 */
export type CommitBatch = (
  ops: ReadonlyArray<() => unknown>,
  durable: boolean,
) => Array<{ ok: true; value: unknown } | { ok: false; error: unknown }>;

/**
 * One writer for the whole store. Operations from every session queue up and are committed together
 * in one transaction, so one fsync acknowledges many appends.
 */
export class GroupCommit {
  private queue: Pending[] = [];
  private scheduled = false;
  private closed = false;
  private idle: Array<() => void> = [];
  private readonly batchSizes: number[] = [];
  private readonly listeners = new Set<(operations: number) => void>();
  /** Committed batches waiting for their durable barrier. */
  private readonly settling = new Set<Promise<void>>();

  constructor(
    private readonly commit: CommitBatch,
    private readonly options: GroupCommitOptions,
  ) {}

  submit<T>(run: () => T, durable = true): Promise<T> {
    if (this.closed) return Promise.reject(new SessiondError("STORE_CLOSED", "the store is closed"));
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ run, durable, resolve: resolve as (value: unknown) => void, reject });
      this.schedule();
    });
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
    // While a batch waits for the disk, the queue keeps filling: the next transaction takes all of it
    // once the fsync is back (one commit and one fsync for many appends, instead of one per tick).
    if (this.settling.size > 0 && this.queue.length > 0) return;
    const batch = this.queue.splice(0, this.options.maxBatch);
    if (batch.length > 0) this.runBatch(batch);
    if (this.queue.length > 0) this.schedule();
    else for (const resolve of this.idle.splice(0)) resolve();
  }

  private runBatch(batch: Pending[]): void {
    this.batchSizes.push(batch.length);
    if (this.batchSizes.length > 1000) this.batchSizes.splice(0, this.batchSizes.length - 1000);
    let results: ReturnType<CommitBatch>;
    const durable = batch.some((p) => p.durable);
    try {
      results = this.commit(
        batch.map((p) => p.run),
        durable,
      );
    } catch (error) {
      for (const p of batch) p.reject(storeFailure("the store could not commit", error));
      return;
    }
    for (const listener of this.listeners) listener(batch.length);
    const barrier = durable ? this.options.durableBarrier : undefined;
    if (!barrier) {
      settle(batch, results);
      return;
    }
    const settling: Promise<void> = barrier().then(
      () => settle(batch, results),
      (error: unknown) => {
        const failure = storeFailure("the commit could not be made durable", error);
        for (const p of batch) p.reject(failure);
      },
    );
    this.settling.add(settling);
    void settling.finally(() => {
      this.settling.delete(settling);
      if (this.queue.length > 0) this.schedule();
    });
  }
}

function settle(batch: readonly Pending[], results: ReturnType<CommitBatch>): void {
  batch.forEach((p, i) => {
    const result = results[i];
    if (result?.ok) p.resolve(result.value);
    else p.reject(result?.error);
  });
}

function storeFailure(what: string, error: unknown): SessiondError {
  if (error instanceof SessiondError) return error;
  return new SessiondError("STORE_UNAVAILABLE", `${what}: ${messageOf(error)}`, { cause: error });
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
