import { SessiondError } from "../model/errors.js";
import { runFenced } from "../store/fence.js";
import type { KeyLeases } from "./queue-types.js";

export interface KeyLaneOptions {
  /** Work that may wait behind the running one; beyond it, SESSION_BUSY. */
  maxQueue: number;
  /** The database's leases per key (PostgreSQL): the lane's work holds the key's lease while it runs. */
  leases?: KeyLeases | undefined;
  /** Called when the lane's work has to wait for the key's lease (another process holds it). */
  onLeaseWait?: () => void;
  /** Called each time the lane empties. */
  onIdle?: () => void;
}

/**
 * The lane of one key: its work runs one at a time in arrival order, holding the key's lease where the
 * store has leases (one turn per key across every process on the database), and everything it appends to
 * the key is fenced by that lease.
 */
export class KeyLane {
  /** Work accepted and not finished, the running one included. */
  size = 0;
  private tail: Promise<unknown> | undefined;

  constructor(
    readonly key: string,
    private readonly options: KeyLaneOptions,
  ) {}

  run<T>(work: () => Promise<T>): Promise<T> {
    if (this.size > this.options.maxQueue) {
      const { key, size } = this;
      return Promise.reject(
        new SessiondError("SESSION_BUSY", `session ${JSON.stringify(key)} already has ${size} turns queued`, {
          details: { key, queued: size },
        }),
      );
    }
    this.size++;
    const { leases } = this.options;
    const start = leases ? () => this.leased(leases, work) : work;
    // An empty lane starts the work at once, in the caller's tick: it goes before any later work.
    const result = this.tail ? this.tail.then(start) : attempt(start);
    const tail: Promise<unknown> = result.then(
      () => this.done(tail),
      () => this.done(tail),
    );
    this.tail = tail;
    return result;
  }

  /** Resolves once the work accepted so far has finished (never rejects). */
  async idle(): Promise<void> {
    await this.tail;
  }

  private done(tail: Promise<unknown>): void {
    this.size--;
    if (this.tail === tail) this.tail = undefined;
    if (this.size === 0) this.options.onIdle?.();
  }

  private async leased<T>(leases: KeyLeases, work: () => Promise<T>): Promise<T> {
    const fence = await leases.acquire(this.key, this.options.onLeaseWait);
    try {
      return await runFenced(fence, work);
    } finally {
      // A release that fails (the server went away) leaves the lease to lapse after its TTL.
      await leases.release(fence).catch(() => {});
    }
  }
}

/** `run()`, with a throw as a rejection, as it would be inside `then`. */
export function attempt<T>(run: () => Promise<T>): Promise<T> {
  try {
    return run();
  } catch (error) {
    return Promise.reject(error);
  }
}
