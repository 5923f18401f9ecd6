import { SessiondError } from "../model/errors.js";
import type { MaybePromise, StoreDriver, WriteGroup } from "./driver.js";
import { type BatchResult, INLINE_SYNC_MAX_BATCH, messageOf } from "./group-commit.js";
import type { KeyMemory } from "./key-memory.js";
import { type BatchReads, BatchState, type Operation, type Planned } from "./log-batch.js";
import { chain } from "./maybe-promise.js";

/** How often an operation refused as stale (another writer got there first) is planned again. */
const MAX_REPLANS = 8;
/** The longest wait before a replan (see `backoff`). */
const MAX_BACKOFF_MS = 100;

/**
 * The wait before replan `round + 1` on a driver that cannot hold keys: none for the first (another writer
 * got there once), then a random share of 2, 4, 8… ms, so that writers that keep colliding on the same keys
 * spread out instead of replanning in lockstep until one gives up with STORE_BUSY.
 */
function backoff(round: number): Promise<void> | undefined {
  if (round === 0) return undefined;
  const ms = Math.random() * Math.min(MAX_BACKOFF_MS, 2 ** round);
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** What a batch's commit works with: the driver, the reads its operations prepare with, the core's memory. */
export interface CommitContext {
  driver: StoreDriver;
  reads: BatchReads;
  memory: KeyMemory;
}

/**
 * Commits one batch of the writer: what other writers changed is dropped first, then every operation is
 * prepared and planned against the batch's state, their groups committed, and the stale ones planned again.
 */
export function commitOperations(
  ctx: CommitContext,
  ops: ReadonlyArray<Operation>,
  durable: boolean,
): MaybePromise<BatchResult[]> {
  const results: BatchResult[] = new Array(ops.length);
  return chain(ctx.memory.foreign(), () =>
    attempt(
      ctx,
      ops,
      ops.map((_, i) => i),
      results,
      durable,
      0,
    ),
  );
}

/** Prepares and plans the operations at `indexes`, commits their groups, and plans the stale ones again. */
function attempt(
  ctx: CommitContext,
  ops: ReadonlyArray<Operation>,
  indexes: number[],
  results: BatchResult[],
  durable: boolean,
  round: number,
): MaybePromise<BatchResult[]> {
  const { driver, reads, memory } = ctx;
  const batch = new BatchState();
  const seen = memory.seen;
  // Only the Promises are collected: a synchronous driver's prepares allocate nothing here.
  let waiting: Array<Promise<void>> | undefined;
  for (const i of indexes) {
    let prepared: MaybePromise<void>;
    try {
      prepared = ops[i]!.prepare(reads, batch);
    } catch (error) {
      prepared = Promise.reject(error);
    }
    if (prepared instanceof Promise) {
      waiting ??= [];
      waiting.push(prepared);
    }
  }
  return chain(waiting && Promise.all(waiting), () => {
    const groups: WriteGroup[] = [];
    const owners: Array<{ index: number; planned: Planned<unknown> }> = [];
    const now = Date.now();
    for (const index of indexes) {
      try {
        const op = ops[index]!;
        const planned = op.plan(batch, now);
        if (planned.changes.length === 0 && !planned.inbox)
          results[index] = { ok: true, value: planned.result };
        else {
          const { changes, expects, inbox } = planned;
          const group: WriteGroup = { changes, expects };
          if (op.fence) group.fence = op.fence;
          if (inbox) group.inbox = inbox;
          groups.push(group);
          owners.push({ index, planned });
        }
      } catch (error) {
        results[index] = { ok: false, error: asStoreError(error) };
      }
    }
    if (groups.length === 0) return results;
    let outcomes: ReturnType<StoreDriver["commit"]>;
    try {
      outcomes = driver.commit(groups, durable);
    } catch (error) {
      memory.forgetAll();
      throw error;
    }
    const settle = (settled: Awaited<typeof outcomes>) => {
      // A small durable batch is made durable here, on the loop (see INLINE_SYNC_MAX_BATCH); a failed
      // fsync throws STORE_FAILED, which stops the writer.
      if (durable && ops.length < INLINE_SYNC_MAX_BATCH && driver.syncNow) {
        try {
          driver.syncNow();
        } catch (error) {
          memory.forgetAll();
          throw error;
        }
      }
      const stale: number[] = [];
      const failedKeys = new Set<string>();
      const doneKeys = new Set<string>();
      settled.forEach((outcome, g) => {
        const { index, planned } = owners[g]!;
        if (outcome.ok) {
          results[index] = { ok: true, value: planned.result };
          for (const key of planned.keys) doneKeys.add(key);
          planned.committed?.();
          return;
        }
        for (const key of planned.keys) failedKeys.add(key);
        if ("stale" in outcome) stale.push(index);
        else results[index] = { ok: false, error: outcome.error };
      });
      // Another writer's change heard meanwhile (by a read, or a batch committing beside this one) may
      // be newer than this commit: its keys are read again rather than cached as this batch left them.
      for (const key of doneKeys) {
        const head = batch.headOf(key);
        if (memory.droppedSince(key, seen)) memory.forget(key);
        else if (head && !failedKeys.has(key)) memory.keep(key, head);
      }
      for (const key of failedKeys) memory.forget(key);
      if (stale.length === 0) return results;
      if (round >= MAX_REPLANS) {
        for (const index of stale) results[index] = { ok: false, error: contended() };
        return results;
      }
      return replan(ctx, ops, stale, results, durable, round);
    };
    if (outcomes instanceof Promise) {
      return outcomes.then(settle, (error: unknown) => {
        memory.forgetAll();
        throw error;
      });
    }
    return settle(outcomes);
  });
}

/**
 * Plans the stale operations again. A driver that can (`hold`: processes on one database) holds their keys
 * from before they are read again until they commit, so another writer that keeps committing to them
 * cannot make them stale every time; on another, a jittered wait comes first (`backoff`).
 */
function replan(
  ctx: CommitContext,
  ops: ReadonlyArray<Operation>,
  stale: number[],
  results: BatchResult[],
  durable: boolean,
  round: number,
): MaybePromise<BatchResult[]> {
  const next = () => attempt(ctx, ops, stale, results, durable, round + 1);
  const keys = ctx.driver.hold ? keysOf(ops, stale) : undefined;
  if (!keys || !ctx.driver.hold) return chain(backoff(round), next);
  return ctx.driver.hold(keys).then((release) => {
    let planned: MaybePromise<BatchResult[]>;
    try {
      planned = next();
    } catch (error) {
      release();
      throw error;
    }
    return Promise.resolve(planned).finally(release);
  });
}

/** The keys the operations write, when every one of them says (`Operation.keys`). */
function keysOf(ops: ReadonlyArray<Operation>, indexes: readonly number[]): string[] | undefined {
  const keys = new Set<string>();
  for (const i of indexes) {
    const some = ops[i]!.keys;
    if (!some) return undefined;
    for (const key of some) keys.add(key);
  }
  return [...keys];
}

function contended(): SessiondError {
  return new SessiondError(
    "STORE_BUSY",
    `another writer kept changing the session while this write was planned (${MAX_REPLANS} tries); retry later`,
  );
}

export function asStoreError(error: unknown): SessiondError {
  if (error instanceof SessiondError) return error;
  return new SessiondError("STORE_UNAVAILABLE", `the store failed: ${messageOf(error)}`, { cause: error });
}
