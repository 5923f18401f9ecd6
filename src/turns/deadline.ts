import { isSessiondError, SessiondError } from "../model/errors.js";
import { followSignal } from "./follow-signal.js";

/** How long a turn's runtime may run unless its agent says otherwise: 10 minutes. */
export const DEFAULT_TURN_TIMEOUT_MS = 10 * 60_000;

export interface TurnDeadline {
  /** Aborted when the turn's own signal is, or, with a `TURN_TIMEOUT` error as its reason, at the deadline. */
  signal: AbortSignal;
  /** Rejects with the `TURN_TIMEOUT` error at the deadline; never resolves. */
  expired: Promise<never>;
  /** Stops the timer, and following the turn's signal, once the runtime has answered. */
  clear(): void;
}

/**
 * The deadline of one turn's run. The runtime is told through the signal, and `expired` lets the turn
 * stop waiting for a runtime that ignores it: the lane is freed either way.
 */
export function turnDeadline(key: string, parent: AbortSignal, timeoutMs: number): TurnDeadline {
  const timeout = new AbortController();
  const unfollow = followSignal(timeout, parent);
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = new SessiondError(
        "TURN_TIMEOUT",
        `the turn on ${key} took longer than its ${Math.round(timeoutMs / 1000)} s deadline and was aborted`,
        { details: { timeoutMs } },
      );
      timeout.abort(error);
      reject(error);
    }, timeoutMs);
  });
  // Nobody may be listening when the timer is cleared first; the rejection is then only a formality.
  expired.catch(() => undefined);
  return {
    signal: timeout.signal,
    expired,
    clear: () => {
      clearTimeout(timer);
      unfollow();
    },
  };
}

/** Rejects with the signal's reason once it is aborted for a deadline (not for a cancellation). */
export function deadlineOf(signal: AbortSignal): Promise<never> {
  return new Promise<never>((_, reject) => {
    const check = () => {
      if (isSessiondError(signal.reason, "TURN_TIMEOUT")) reject(signal.reason);
    };
    if (signal.aborted) check();
    else signal.addEventListener("abort", check, { once: true });
  });
}

/** How long a turn past its deadline waits for the aborted runtime to stop (and record what it must). */
export const STOP_GRACE_MS = 1_000;

/** Resolves when `running` settles, or after `graceMs` if it does not. */
export function stopped(running: Promise<unknown>, graceMs = STOP_GRACE_MS): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const grace = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, graceMs);
  });
  return Promise.race([running.then(noop, noop), grace]).finally(() => clearTimeout(timer));
}

function noop(): void {}
