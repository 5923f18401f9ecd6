import { expect } from "vitest";

/** Lets pending promise and I/O callbacks run (event-loop turns, no time) until `condition` holds. */
export async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !condition(); i++) await new Promise<void>((r) => setImmediate(r));
  expect(condition()).toBe(true);
}
