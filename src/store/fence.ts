import { AsyncLocalStorage } from "node:async_hooks";

/** A lease's fencing token: writes of a turn on `key` commit only while its lease still has this epoch. */
export interface Fence {
  key: string;
  epoch: number;
}

/** The fences of the leases the running code holds (several under `runAll`), by key. */
const scope = new AsyncLocalStorage<ReadonlyMap<string, Fence>>();

/**
 * Runs `work` (a turn holding `fence`'s lease) so that every append it makes to `fence.key`, however deep
 * in the engine, is fenced by the epoch: a store with leases (PostgreSQL) commits it only while the lease
 * still has that epoch, else fails it with LEASE_LOST. Stores without leases ignore it.
 */
export function runFenced<T>(fence: Fence, work: () => T): T {
  const outer = scope.getStore();
  return scope.run(new Map(outer).set(fence.key, fence), work);
}

/** The fence of the turn this code runs in, when it holds `key`'s lease. */
export function currentFence(key: string): Fence | undefined {
  return scope.getStore()?.get(key);
}
