import { ELLIPSIS, truncate } from "./truncate.js";

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** The key that stands for the keys dropped from the end of an object; its value is how many. */
export const DROPPED_KEYS = ELLIPSIS;

const size = (value: JsonValue): number => JSON.stringify(value).length;

/**
 * `value` shrunk until its JSON is at most `max` characters, or undefined when nothing fits. It stays valid
 * JSON of the same shape: strings are cut (ending in `…`); objects keep their keys in order and lose them
 * from the end, with `"…": <number dropped>` as the last key; arrays lose elements from the end, with
 * `"…+<number dropped>"` as the last element. Numbers, booleans and null are kept whole or not at all.
 */
export function fitJson(value: JsonValue, max: number): JsonValue | undefined {
  if (max <= 0) return undefined;
  if (size(value) <= max) return value;
  if (typeof value === "string") return fitString(value, max);
  if (Array.isArray(value)) return fitArray(value, max);
  if (value !== null && typeof value === "object") return fitObject(value, max);
  return undefined;
}

function fitString(text: string, max: number): string | undefined {
  // Escapes make the JSON longer than the text, so step down from the most that could fit.
  for (let length = Math.min(text.length, max - 2); length > 0; length -= 1) {
    const cut = truncate(text, length);
    if (size(cut) <= max) return cut;
  }
  return undefined;
}

function fitObject(object: { [key: string]: JsonValue }, max: number): JsonValue | undefined {
  const entries = Object.entries(object);
  // The object does not fit whole, so something will go: keep room for the marker from the start.
  const reserve = `,${JSON.stringify(DROPPED_KEYS)}:${entries.length}`.length;
  const kept: Array<[string, JsonValue]> = [];
  let used = 2;
  for (const [key, item] of entries) {
    const keyCost = JSON.stringify(key).length + 1 + (kept.length > 0 ? 1 : 0);
    const fitted = fitJson(item, max - used - keyCost - reserve);
    if (fitted === undefined) break;
    kept.push([key, fitted]);
    used += keyCost + size(fitted);
  }
  while (kept.length < entries.length) {
    const candidate = Object.fromEntries([...kept, [DROPPED_KEYS, entries.length - kept.length]]);
    if (size(candidate) <= max) return candidate;
    if (kept.length === 0) return undefined;
    kept.pop();
  }
  return Object.fromEntries(kept);
}

function fitArray(items: JsonValue[], max: number): JsonValue | undefined {
  const reserve = `,"${ELLIPSIS}+${items.length}"`.length;
  const kept: JsonValue[] = [];
  let used = 2;
  for (const item of items) {
    const cost = kept.length > 0 ? 1 : 0;
    const fitted = fitJson(item, max - used - cost - reserve);
    if (fitted === undefined) break;
    kept.push(fitted);
    used += cost + size(fitted);
  }
  while (kept.length < items.length) {
    const candidate = [...kept, `${ELLIPSIS}+${items.length - kept.length}`];
    if (size(candidate) <= max) return candidate;
    if (kept.length === 0) return undefined;
    kept.pop();
  }
  return kept;
}
