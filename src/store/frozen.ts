import * as v8 from "node:v8";

const { isStringOneByteRepresentation } = v8 as { isStringOneByteRepresentation?: (text: string) => boolean };

/** A value's copy that nothing can change, and about how many bytes of heap it holds. */
export interface Frozen<T> {
  value: Readonly<T>;
  bytes: number;
}

/** What V8 spends on an object or array besides its contents, and on each slot; rough, on purpose. */
const OBJECT_BYTES = 64;
const SLOT_BYTES = 16;

/**
 * A deep copy of plain JSON-like data with every object and array frozen. Strings are immutable and shared
 * with the original, so a copy of a 1 MB message costs its few objects, not another megabyte; the copy
 * leaves the original (which its owner may still change) alone. `bytes` counts strings at one byte per
 * character (two when one is beyond Latin-1, as V8 stores them) and a fixed cost per object and slot.
 */
export function frozenCopy<T>(value: T): Frozen<T> {
  const counter = { bytes: 0 };
  const copy = copyFrozen(value, counter) as Readonly<T>;
  return { value: copy, bytes: counter.bytes };
}

/**
 * Freezes `value` itself, and every object and array in it: the guarantee of `frozenCopy` without the
 * copy, for data just built that nothing else holds yet (entries just parsed from a file).
 */
export function freezeInPlace<T>(value: T): Readonly<T> {
  if (typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) for (const item of value) freezeInPlace(item);
  else for (const name in value) freezeInPlace((value as Record<string, unknown>)[name]);
  return Object.freeze(value);
}

/** What `frozenCopy` would count for `value`, without copying it (for values frozen already). */
export function heapBytes(value: unknown): number {
  const counter = { bytes: 0 };
  walk(value, counter);
  return counter.bytes;
}

function walk(value: unknown, counter: { bytes: number }): void {
  if (typeof value === "string") {
    counter.bytes += stringBytes(value);
    return;
  }
  if (typeof value !== "object" || value === null) {
    counter.bytes += SLOT_BYTES;
    return;
  }
  counter.bytes += OBJECT_BYTES;
  if (Array.isArray(value)) for (const item of value) walk(item, counter);
  else
    for (const name in value) {
      counter.bytes += SLOT_BYTES;
      walk((value as Record<string, unknown>)[name], counter);
    }
}

function stringBytes(text: string): number {
  return SLOT_BYTES + (isOneByte(text) ? text.length : text.length * 2);
}

function copyFrozen(value: unknown, counter: { bytes: number }): unknown {
  if (typeof value === "string") {
    counter.bytes += stringBytes(value);
    return value;
  }
  if (typeof value !== "object" || value === null) {
    counter.bytes += SLOT_BYTES;
    return value;
  }
  counter.bytes += OBJECT_BYTES;
  if (Array.isArray(value)) return Object.freeze(value.map((item) => copyFrozen(item, counter)));
  const copy: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(value)) {
    counter.bytes += SLOT_BYTES;
    copy[name] = copyFrozen(field, counter);
  }
  return Object.freeze(copy);
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: the test is for any character past Latin-1
const BEYOND_LATIN1 = /[^\u0000-\u00ff]/;

/**
 * Whether V8 holds `text` at one byte a character. Node 22.15+ answers from the string's representation
 * without reading it (a context's sizing read every character of every entry: ~30 % of its walk); before
 * that, a scan for a character past Latin-1 gives the same answer for a string V8 built from one.
 */
const isOneByte: (text: string) => boolean =
  typeof isStringOneByteRepresentation === "function"
    ? isStringOneByteRepresentation
    : (text) => !BEYOND_LATIN1.test(text);
