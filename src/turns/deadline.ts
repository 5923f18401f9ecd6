import { isSessiondError, SessiondError } from "../model/errors.js";

/** How long a turn's runtime may run unless its agent says otherwise: 10 minutes. */
export const DEFAULT_TURN_TIMEOUT_MS = 10 * 60_000;

export interface TurnDeadline {
  /** Stops the timer once the runtime has answered. */
  clear(): void;
}

/**
 * The deadline of one turn's run: at `timeoutMs` the turn's own controller is aborted with a
 * `TURN_TIMEOUT` error, which tells the runtime; `untilDeadline` on the turn's signal lets the turn stop
 * waiting for a runtime that ignores it, so the lane is freed either way.
 */
export function turnDeadline(key: string, turn: AbortController, timeoutMs: number): TurnDeadline {
  const timer = setTimeout(() => {
    turn.abort(
      new SessiondError(
        "TURN_TIMEOUT",
        `the turn on ${key} took longer than its ${Math.round(timeoutMs / 1000)} s deadline and was aborted`,
        { details: { timeoutMs } },
      ),
    );
  }, timeoutMs);
  return { clear: () => clearTimeout(timer) };
}

/** Whether the turn's signal was aborted by its deadline. */
export function timedOut(signal: AbortSignal): boolean {
  return signal.aborted && isSessiondError(signal.reason, "TURN_TIMEOUT");
}

/** `running`'s outcome, or the signal's reason as soon as it is aborted for a deadline (not a cancellation). */
export function untilDeadline<T>(running: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const check = () => {
      if (isSessiondError(signal.reason, "TURN_TIMEOUT")) reject(signal.reason);
    };
    if (signal.aborted) check();
    else signal.addEventListener("abort", check, { once: true });
    running.then(
      (value) => {
        signal.removeEventListener("abort", check);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", check);
        reject(error);
      },
    );
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
