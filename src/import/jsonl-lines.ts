import { nestsDeeperThan } from "./json-text.js";
import type { SourceFiles } from "./source-files.js";

export interface JsonLine {
  line: number;
  value: Record<string, unknown>;
}

/**
 * Every line of a JSONL file that parses as an object, behind the source's caps; each one that does not
 * is reported with its line. A file that cannot be read safely is one problem and no lines.
 */
export function readJsonLines(files: SourceFiles, file: string): JsonLine[] {
  const text = files.text(file);
  if (text === undefined) return [];
  const lines = text.split("\n");
  const out: JsonLine[] = [];
  lines.forEach((raw, i) => {
    if (raw.trim() === "") return;
    const torn = i === lines.length - 1;
    const where = { file, line: i + 1 };
    const before = files.problems.length;
    const value = files.json(raw, where);
    if (typeof value === "object" && value !== null && !Array.isArray(value)) {
      out.push({ line: i + 1, value: value as Record<string, unknown> });
    } else if (files.problems.length === before) {
      files.problems.push({ ...where, reason: "not a JSON object" });
    } else if (torn && files.problems.at(-1)?.reason === "not JSON") {
      files.problems.splice(-1, 1, { ...where, reason: "torn last line (no newline, not JSON)" });
    }
  });
  return out;
}

/**
 * The file's bytes with every line over the caps (length, JSON nesting) blanked to spaces and reported,
 * for parsers that are not the import's own (the JSONL store's): line numbers stay as they were.
 */
export function screenLines(files: SourceFiles, file: string, bytes: Buffer): Buffer {
  let out: Buffer | undefined;
  let start = 0;
  for (let line = 1; start < bytes.length; line++) {
    const end = bytes.indexOf(10, start);
    const stop = end === -1 ? bytes.length : end;
    const tooLong = stop - start > files.limits.lineBytes;
    const reason = tooLong
      ? `${stop - start} bytes, over the cap of ${files.limits.lineBytes}`
      : nestsDeeperThan(bytes.toString("utf8", start, stop), files.limits.jsonDepth)
        ? `JSON nested deeper than ${files.limits.jsonDepth} levels`
        : undefined;
    if (reason) {
      out ??= Buffer.from(bytes);
      out.fill(32, start, stop);
      files.problems.push({ file, line, reason: `${reason}; left out` });
    }
    if (end === -1) break;
    start = end + 1;
  }
  return out ?? bytes;
}
