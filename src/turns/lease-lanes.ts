import { type Fence, runFenced } from "../store/fence.js";
import type { Store } from "../store/store.js";
import { Lanes, type LanesOptions } from "./lanes.js";

/** Leases per key shared by every process on one database (the PostgreSQL store's). */
export interface KeyLeases {
  /** Waits until this process holds the key's lease. */
  acquire(key: string): Promise<Fence>;
  release(fence: Fence): Promise<void>;
}

export interface LeasingStore {
  readonly leases: KeyLeases;
}

export function hasLeases(store: Store): store is Store & LeasingStore {
  return typeof (store as Partial<LeasingStore>).leases?.acquire === "function";
}

/**
 * Lanes that also hold the key's lease while their work runs: one turn per key across every process
 * on the database. Within this process turns still queue FIFO in the lane (and `SESSION_BUSY` past its
 * bound); only the lane's head waits for the lease, and everything it appends to the key is fenced by it.
 */
export class LeaseLanes extends Lanes {
  constructor(
    private readonly leases: KeyLeases,
    options: LanesOptions = {},
  ) {
    super(options);
  }

  override run<T>(key: string, work: () => Promise<T>): Promise<T> {
    return super.run(key, async () => {
      const fence = await this.leases.acquire(key);
      try {
        return await runFenced(fence, work);
      } finally {
        // A release that fails (the server went away) leaves the lease to lapse after its TTL.
        await this.leases.release(fence).catch(() => {});
      }
    });
  }
}

/** Lanes for this store: lease-holding ones when the store has leases. */
export function lanesFor(store: Store, options: LanesOptions): Lanes {
  return hasLeases(store) ? new LeaseLanes(store.leases, options) : new Lanes(options);
}
