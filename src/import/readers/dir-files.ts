import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";

/** The regular `*.jsonl` files of a folder (not hidden ones), sorted. */
export function jsonlNames(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isFile() && d.name.endsWith(".jsonl") && !d.name.startsWith("."))
    .map((d) => d.name)
    .sort();
}

/** The sessions folder of a peer's home or workspace (`<path>/sessions`), or the path itself. */
export function sessionsDir(path: string): string {
  const inner = join(path, "sessions");
  return existsSync(inner) && statSync(inner).isDirectory() ? inner : path;
}
