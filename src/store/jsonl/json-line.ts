/** A character JSON must escape, or a surrogate (a lone one is escaped; a pair is left to JSON.stringify). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what JSON escapes
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** `JSON.stringify(text)`: most text needs no escaping, and checking that costs half of stringifying it. */
export function jsonString(text: string): string {
  return NEEDS_ESCAPE.test(text) ? JSON.stringify(text) : `"${text}"`;
}

/**
 * `JSON.stringify(line) + "\n"`, byte for byte, for a plain object: its own enumerable fields in order,
 * strings, numbers and booleans written here, anything nested by JSON.stringify. About a third faster for
 * a session file's lines, which are mostly one long string.
 */
export function encodeLine(line: object): string {
  let out = "";
  const fields = line as Record<string, unknown>;
  for (const key of Object.keys(fields)) {
    const value = fields[key];
    let json: string | undefined;
    switch (typeof value) {
      case "string":
        json = jsonString(value);
        break;
      case "number":
        json = Number.isFinite(value) ? String(value) : "null";
        break;
      case "boolean":
        json = value ? "true" : "false";
        break;
      case "undefined":
      case "function":
      case "symbol":
        continue;
      default:
        json = JSON.stringify(value);
        if (json === undefined) continue;
    }
    out += `${out === "" ? "{" : ","}${jsonString(key)}:${json}`;
  }
  return `${out === "" ? "{" : out}}\n`;
}
