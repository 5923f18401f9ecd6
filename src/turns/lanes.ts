import { KeyLane } from "./key-lane.js";

export interface LanesOptions {
  /** Turns that may wait behind the running one on one key; beyond it, SESSION_BUSY. Default 16. */
  maxQueue?: number;
}

/**
 * One lane per key: work on one key runs one at a time in arrival order; different keys run in
 * parallel. A lane that empties is forgotten, so idle keys cost nothing.
 */
export class Lanes {
  private readonly lanes = new Map<string, KeyLane>();
  private readonly maxQueue: number;

  constructor(options: LanesOptions = {}) {
    this.maxQueue = options.maxQueue ?? 16;
  }

  run<T>(key: string, work: () => Promise<T>): Promise<T> {
    let lane = this.lanes.get(key);
    if (!lane) {
      const created = new KeyLane(key, {
        maxQueue: this.maxQueue,
        onIdle: () => {
          if (this.lanes.get(key) === created) this.lanes.delete(key);
        },
      });
      lane = created;
      this.lanes.set(key, lane);
    }
    return lane.run(work);
  }

  /**
   * Runs `work` holding every lane of `keys`, taken in sorted order so that two such calls never wait
   * for each other's second lane.
   */
  runAll<T>(keys: readonly string[], work: () => Promise<T>): Promise<T> {
    return holdAll(keys, (key, next) => this.run(key, next), work);
  }

  /** Resolves once the work accepted so far on `key` has finished (never rejects). */
  async idle(key: string): Promise<void> {
    await this.lanes.get(key)?.idle();
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
    while (this.lanes.size > 0) await Promise.all([...this.lanes.values()].map((lane) => lane.idle()));
  }
}

/** Runs `work` inside `hold` of every key, taken in sorted order so that two callers never deadlock. */
export function holdAll<T>(
  keys: readonly string[],
  hold: (key: string, work: () => Promise<T>) => Promise<T>,
  work: () => Promise<T>,
): Promise<T> {
  const sorted = [...new Set(keys)].sort();
  const next = (i: number): Promise<T> =>
    i === sorted.length ? work() : hold(sorted[i] as string, () => next(i + 1));
  return next(0);
}
