import type { Pool, PoolClient } from "pg";
import { SessiondError } from "../../model/errors.js";
import { DEFAULT_MAX_QUEUED_BYTES, messageOf, queueFull } from "../group-commit.js";
import { connect, isConnectionError, release, unavailable } from "./pool.js";

export type OpResult = { ok: true; value: unknown } | { ok: false; error: unknown };

interface Pending<R> {
  request: R;
  /** Whether it must be durable when acknowledged (synchronous commit). */
  durable: boolean;
  bytes: number;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/** Writes a batch of requests inside one open transaction: one result per request, in order. */
export type BatchWork<R> = (client: PoolClient, requests: R[]) => Promise<OpResult[]>;

const MAX_BATCH = 1000;
/** A batch that lost a race with another process (a unique key taken meanwhile) is planned again. */
const RACE_RETRIES = 5;
const UNIQUE_VIOLATION = "23505";
const DEADLOCK = "40P01";

/**
 * The PostgreSQL store's one writer: everything submitted within one event-loop turn becomes one
 * transaction, and every request resolves only after COMMIT returns (with `synchronous_commit` on for
 * any durable request in it, so the WAL is flushed). One batch at a time, on one pooled connection that
 * goes back to the pool when the batch ends. The server going away fails the batch with
 * STORE_UNAVAILABLE (`outcome: "unknown"` if COMMIT had been sent, else `"not-written"`); the next batch
 * takes a fresh connection, so the store reconnects by itself.
 */
export class PgWriter<R> {
  private queue: Array<Pending<R>> = [];
  private queuedBytes = 0;
  private running: Promise<void> | undefined;
  private closed = false;

  constructor(
    private readonly pool: Pool,
    private readonly work: BatchWork<R>,
    /** Whether a request may share a transaction with its neighbours (appends); others run alone. */
    private readonly batchable: (request: R) => boolean,
    private readonly maxQueuedBytes = DEFAULT_MAX_QUEUED_BYTES,
  ) {}

  submit<T>(request: R, durable: boolean, bytes: number): Promise<T> {
    if (this.closed) return Promise.reject(new SessiondError("STORE_CLOSED", "the store is closed"));
    const full = queueFull(this.queue.length, this.queuedBytes, bytes, {
      maxQueuedBytes: this.maxQueuedBytes,
    });
    if (full) return Promise.reject(full);
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ request, durable, bytes, resolve: resolve as (v: unknown) => void, reject });
      this.queuedBytes += bytes;
      this.running ??= this.drain();
    });
  }

  /** Resolves when everything submitted so far has committed or failed. */
  async flush(): Promise<void> {
    while (this.running) await this.running;
  }

  async close(): Promise<void> {
    await this.flush();
    this.closed = true;
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      // What the last batch's acknowledgements set off (each writer's next append) joins this batch:
      // everything submitted within one event-loop turn is one transaction.
      await new Promise<void>((resolve) => setImmediate(resolve));
      let size = 1;
      if (this.batchable(this.queue[0]!.request)) {
        while (size < this.queue.length && size < MAX_BATCH && this.batchable(this.queue[size]!.request))
          size++;
      }
      const batch = this.queue.splice(0, size);
      for (const p of batch) this.queuedBytes -= p.bytes;
      await this.runBatch(batch);
    }
    this.running = undefined;
  }

  private async runBatch(batch: Array<Pending<R>>, attempt = 0): Promise<void> {
    let client: PoolClient;
    try {
      client = await connect(this.pool);
    } catch (error) {
      for (const p of batch) p.reject(error);
      return;
    }
    let committing = false;
    try {
      await client.query(
        batch.some((p) => p.durable) ? "BEGIN" : "BEGIN; SET LOCAL synchronous_commit = off",
      );
      const results = await this.work(
        client,
        batch.map((p) => p.request),
      );
      committing = true;
      await client.query("COMMIT");
      release(client);
      batch.forEach((p, i) => {
        const result = results[i];
        if (result?.ok) p.resolve(result.value);
        else p.reject(result?.error);
      });
    } catch (error) {
      if (isConnectionError(error)) {
        release(client, error);
        for (const p of batch) p.reject(unavailable(error, committing ? "unknown" : "not-written"));
        return;
      }
      const rolledBack = await client.query("ROLLBACK").then(
        () => true,
        () => false,
      );
      release(client, rolledBack ? undefined : true);
      const code = (error as { code?: unknown }).code;
      if ((code === UNIQUE_VIOLATION || code === DEADLOCK) && attempt < RACE_RETRIES) {
        await this.runBatch(batch, attempt + 1);
      } else if (batch.length > 1) {
        // Something in the batch the server refused: each request on its own, so only that one fails.
        for (const p of batch) await this.runBatch([p], attempt);
      } else {
        for (const p of batch) p.reject(storeError(error));
      }
    }
  }
}

function storeError(error: unknown): unknown {
  if (error instanceof SessiondError) return error;
  return new SessiondError("STORE_UNAVAILABLE", `PostgreSQL refused the write: ${messageOf(error)}`, {
    cause: error,
    details: { outcome: "not-written" },
  });
}
