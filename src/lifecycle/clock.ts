/** Where lifecycle code reads the time, so tests inject it instead of sleeping. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

/** A handle returned by an `IntervalTimer`; opaque to callers. */
export type TimerHandle = unknown;

/** Where periodic work is scheduled, so tests drive it by hand. */
export interface IntervalTimer {
  setInterval(callback: () => void, intervalMs: number): TimerHandle;
  clearInterval(handle: TimerHandle): void;
}

/** Where one-shot delays (a queue's debounce) are scheduled, so tests fire them by moving time. */
export interface OneShotTimer {
  setTimeout(callback: () => void, delayMs: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

export const systemClock: Clock = { now: () => Date.now() };

/** `setInterval` and `setTimeout`, `unref()`ed so pending work never keeps the process alive. */
export const systemTimer: IntervalTimer & OneShotTimer = {
  setTimeout(callback, delayMs) {
    const handle = setTimeout(callback, delayMs);
    handle.unref();
    return handle;
  },
  clearTimeout(handle) {
    clearTimeout(handle as NodeJS.Timeout);
  },
  setInterval(callback, intervalMs) {
    const handle = setInterval(callback, intervalMs);
    handle.unref();
    return handle;
  },
  clearInterval(handle) {
    clearInterval(handle as NodeJS.Timeout);
  },
};

interface ManualInterval {
  callback: () => void;
  /** 0 for a one-shot timeout: removed when it fires. */
  intervalMs: number;
  nextAt: number;
}

/**
 * A clock and timer for tests: time moves only through `advance` / `set`, which fire the intervals that
 * fall due on the way, in time order.
 */
export class ManualClock implements Clock, IntervalTimer, OneShotTimer {
  private time: number;
  private readonly intervals = new Set<ManualInterval>();

  constructor(start: number) {
    this.time = start;
  }

  now(): number {
    return this.time;
  }

  setInterval(callback: () => void, intervalMs: number): TimerHandle {
    const interval: ManualInterval = {
      callback,
      intervalMs: Math.max(1, intervalMs),
      nextAt: this.time + Math.max(1, intervalMs),
    };
    this.intervals.add(interval);
    return interval;
  }

  clearInterval(handle: TimerHandle): void {
    this.intervals.delete(handle as ManualInterval);
  }

  setTimeout(callback: () => void, delayMs: number): TimerHandle {
    const timeout: ManualInterval = { callback, intervalMs: 0, nextAt: this.time + Math.max(0, delayMs) };
    this.intervals.add(timeout);
    return timeout;
  }

  clearTimeout(handle: TimerHandle): void {
    this.intervals.delete(handle as ManualInterval);
  }

  /** How many intervals and timeouts are scheduled. */
  get pending(): number {
    return this.intervals.size;
  }

  /** Moves time forward by `ms`, firing each interval every time it falls due. */
  advance(ms: number): void {
    this.set(this.time + ms);
  }

  /** Moves time to `to` (never backwards), firing each interval every time it falls due. */
  set(to: number): void {
    for (;;) {
      let next: ManualInterval | undefined;
      for (const interval of this.intervals) {
        if (interval.nextAt <= to && (next === undefined || interval.nextAt < next.nextAt)) next = interval;
      }
      if (next === undefined) break;
      this.time = Math.max(this.time, next.nextAt);
      if (next.intervalMs === 0) this.intervals.delete(next);
      else next.nextAt += next.intervalMs;
      next.callback();
    }
    this.time = Math.max(this.time, to);
  }
}
