import { monotonicFactory } from "ulid";

const next = monotonicFactory();

/** A new ULID: sortable by creation time, strictly increasing within this process. */
export function newId(now: number = Date.now()): string {
  return next(now);
}
