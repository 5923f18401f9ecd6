import type { MaybePromise } from "./driver.js";

/** `next(value)`, at once when `value` is not a Promise: a synchronous driver pays no turn of the event loop. */
export function chain<T, U>(value: MaybePromise<T>, next: (value: T) => MaybePromise<U>): MaybePromise<U> {
  return value instanceof Promise ? value.then(next) : next(value);
}

/** Waits for whichever of `values` are Promises; synchronous when none is. */
export function all(values: ReadonlyArray<MaybePromise<unknown>>): MaybePromise<void> {
  const waiting = values.filter((v): v is Promise<unknown> => v instanceof Promise);
  return waiting.length === 0 ? undefined : Promise.all(waiting).then(() => undefined);
}
