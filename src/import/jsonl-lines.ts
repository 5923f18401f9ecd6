import { readFileSync } from "node:fs";
import type { ImportProblem } from "./types.js";

export interface JsonLine {
  line: number;
  value: Record<string, unknown>;
}

/** Every line of a JSONL file that parses as an object; each one that does not is reported with its line. */
export function readJsonLines(file: string, problems: ImportProblem[]): JsonLine[] {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    problems.push({ file, reason: `cannot read: ${(error as Error).message}` });
    return [];
  }
  const lines = text.split("\n");
  const out: JsonLine[] = [];
  lines.forEach((raw, i) => {
    if (raw.trim() === "") return;
    const torn = i === lines.length - 1;
    try {
      const value: unknown = JSON.parse(raw);
      if (typeof value === "object" && value !== null && !Array.isArray(value)) {
        out.push({ line: i + 1, value: value as Record<string, unknown> });
      } else problems.push({ file, line: i + 1, reason: "not a JSON object" });
    } catch {
      problems.push({
        file,
        line: i + 1,
        reason: torn ? "torn last line (no newline, not JSON)" : "not JSON",
      });
    }
  });
  return out;
}
