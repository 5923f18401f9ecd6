import { InvalidArgumentError } from "commander";

/** A commander option parser for an integer in `min..max`. */
export function intIn(min: number, max: number): (value: string) => number {
  return (value) => {
    const n = /^\d+$/.test(value.trim()) ? Number(value) : Number.NaN;
    if (!Number.isSafeInteger(n) || n < min || n > max) {
      throw new InvalidArgumentError(`expected an integer from ${min} to ${max}.`);
    }
    return n;
  };
}

export function positiveNumber(value: string): number {
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n) || n <= 0) {
    throw new InvalidArgumentError("expected a positive number.");
  }
  return n;
}

/** Milliseconds since the epoch, or an ISO date (`2026-03-14T09:26:53Z`). */
export function timestamp(value: string): number {
  if (/^\d+$/.test(value.trim())) {
    const n = Number(value);
    if (Number.isSafeInteger(n)) return n;
  } else if (/^\d{4}-\d{2}-\d{2}/.test(value.trim())) {
    const n = Date.parse(value);
    if (Number.isFinite(n) && n >= 0) return n;
  }
  throw new InvalidArgumentError("expected milliseconds since the epoch or an ISO date.");
}

/** Quotes a word for a POSIX shell when it needs it, for the commands the CLI suggests. */
export function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}
