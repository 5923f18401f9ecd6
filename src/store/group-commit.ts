import { SessiondError } from "../model/errors.js";

interface Pending {
  run: () => unknown;
  durable: boolean;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

export interface GroupCommitOptions {
  /** 0: commit on the next turn of the event loop; otherwise wait this long to gather more. */
  intervalMs: number;
  /** The most operations in one transaction. */
  maxBatch: number;
  /**
   * Batches whose commit resolves later (an fsync in flight) at one time: the next batch runs while the
   * previous one waits for the disk. Default 1.
   */
  maxInflight?: number;
}

export type BatchResults = Array<{ ok: true; value: unknown } | { ok: false; error: unknown }>;

/**
 * Runs a batch: each op's result or error, in order. `durable` is true when any op must be on disk when
 * acknowledged. Throws (or rejects) if the batch as a whole could not commit. A promise means the batch
 * is acknowledged when it resolves (e.g. after an fsync), and the next batch may run meanwhile.
 */
export type CommitBatch = (
  ops: ReadonlyArray<() => unknown>,
  durable: boolean,
) => BatchResults | Promise<BatchResults>;

/**
 * One writer for the whole store. Operations from every session queue up and are committed together
 * in one transaction, so one fsync acknowledges many appends.
 */
export class GroupCommit {
  private queue: Pending[] = [];
  private scheduled = false;
  private closed = false;
  private idle: Array<() => void> = [];
  private inflight = 0;
  private readonly batchSizes: number[] = [];

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
  flush(): Promise<void> {
    if (this.queue.length === 0 && this.inflight === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  async close(): Promise<void> {
    await this.flush();
    this.closed = true;
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
    // Resumed when a batch in flight settles.
    if (this.inflight >= (this.options.maxInflight ?? 1)) return;
    const batch = this.queue.splice(0, this.options.maxBatch);
    if (batch.length > 0) this.runBatch(batch);
    if (this.queue.length > 0) this.schedule();
    else if (this.inflight === 0) for (const resolve of this.idle.splice(0)) resolve();
  }

  private runBatch(batch: Pending[]): void {
    this.batchSizes.push(batch.length);
    if (this.batchSizes.length > 1000) this.batchSizes.splice(0, this.batchSizes.length - 1000);
    let results: ReturnType<CommitBatch>;
    try {
      results = this.commit(
        batch.map((p) => p.run),
        batch.some((p) => p.durable),
      );
    } catch (error) {
      rejectAll(batch, error);
      return;
    }
    if (!(results instanceof Promise)) {
      settle(batch, results);
      return;
    }
    this.inflight++;
    results
      .then(
        (settled) => settle(batch, settled),
        (error: unknown) => rejectAll(batch, error),
      )
      .finally(() => {
        this.inflight--;
        if (this.queue.length > 0) this.schedule();
        else if (this.inflight === 0) for (const resolve of this.idle.splice(0)) resolve();
      });
  }
}

function settle(batch: Pending[], results: BatchResults): void {
  batch.forEach((p, i) => {
    const result = results[i];
    if (result?.ok) p.resolve(result.value);
    else p.reject(result?.error);
  });
}

function rejectAll(batch: Pending[], error: unknown): void {
  const failure =
    error instanceof SessiondError
      ? error
      : new SessiondError("STORE_UNAVAILABLE", `the store could not commit: ${messageOf(error)}`, {
          cause: error,
        });
  for (const p of batch) p.reject(failure);
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
