import { SessiondError } from "../model/errors.js";

interface Lane {
  /** Turns running or waiting on this key. */
  size: number;
  tail: Promise<unknown>;
}

export interface LanesOptions {
  /** Turns that may wait behind the running one on one key; beyond it, SESSION_BUSY. Default 16. */
  maxQueue?: number;
}

/**
 * One lane per key: work on one key runs one at a time in arrival order; different keys run in
 * parallel. A lane that empties is forgotten, so idle keys cost nothing.
 */
export class Lanes {
  private readonly lanes = new Map<string, Lane>();
  private readonly maxQueue: number;

  constructor(options: LanesOptions = {}) {
    this.maxQueue = options.maxQueue ?? 16;
  }

  run<T>(key: string, work: () => Promise<T>): Promise<T> {
    let lane = this.lanes.get(key);
    if (!lane) {
      lane = { size: 0, tail: Promise.resolve() };
      this.lanes.set(key, lane);
    }
    if (lane.size > this.maxQueue) {
      return Promise.reject(
        new SessiondError(
          "SESSION_BUSY",
          `session ${JSON.stringify(key)} already has ${lane.size} turns queued`,
          {
            details: { key, queued: lane.size },
          },
        ),
      );
    }
    const current = lane;
    current.size++;
    const result = current.tail.then(work);
    current.tail = result.then(
      () => this.release(key, current),
      () => this.release(key, current),
    );
    return result;
  }

  /**
   * Runs `work` holding every lane of `keys`, taken in sorted order so that two such calls never wait
   * for each other's second lane.
   */
  runAll<T>(keys: readonly string[], work: () => Promise<T>): Promise<T> {
    const sorted = [...new Set(keys)].sort();
    const hold = (i: number): Promise<T> =>
      i === sorted.length ? work() : this.run(sorted[i]!, () => hold(i + 1));
    return hold(0);
  }

  /** Resolves once the work accepted so far on `key` has finished (never rejects). */
  async idle(key: string): Promise<void> {
    await this.lanes.get(key)?.tail;
  }

  /** Turns running or waiting on a key. */
  depth(key: string): number {
    return this.lanes.get(key)?.size ?? 0;
  }

  /** Keys with running or waiting turns, and how many each. */
  active(): Map<string, number> {
    return new Map([...this.lanes].map(([key, lane]) => [key, lane.size]));
  }

  /** Resolves when every turn accepted so far has finished. */
  async drain(): Promise<void> {
    while (this.lanes.size > 0) await Promise.all([...this.lanes.values()].map((lane) => lane.tail));
  }

  private release(key: string, lane: Lane): void {
    lane.size--;
    if (lane.size === 0 && this.lanes.get(key) === lane) this.lanes.delete(key);
  }
}
