// How each peer's own JSON encoder writes a value, so fixtures carry the bytes the peers write.

/** JavaScript / serde_json: `JSON.stringify`, no spaces. */
export const compact = (value: unknown): string => JSON.stringify(value);

/** Python's `json.dumps(obj, ensure_ascii=False)`: `", "` and `": "` separators. */
export function pythonDumps(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(pythonDumps).join(", ")}]`;
  if (value !== null && typeof value === "object")
    return `{${Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => `${JSON.stringify(k)}: ${pythonDumps(v)}`)
      .join(", ")}}`;
  return JSON.stringify(value);
}

/** Go's `encoding/json` (HTML-safe): `<`, `>`, `&`, U+2028 and U+2029 escaped. */
export function goMarshal(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, "\\u003c")
    .replace(/>/g, "\\u003e")
    .replace(/&/g, "\\u0026")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
}

/** Go's `json.MarshalIndent(v, "", "  ")`, HTML-safe like `goMarshal`. */
export function goMarshalIndent(value: unknown): string {
  return JSON.stringify(value, null, 2)
    .replace(/</g, "\\u003c")
    .replace(/>/g, "\\u003e")
    .replace(/&/g, "\\u0026");
}

/** One line per value (a string is written as it is: a broken line on purpose). */
export const lines = (encode: (v: unknown) => string, values: unknown[]): string =>
  values.map((v) => `${typeof v === "string" ? v : encode(v)}\n`).join("");
