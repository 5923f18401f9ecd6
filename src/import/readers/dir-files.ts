import { join } from "node:path";
import type { SourceFiles } from "../source-files.js";

/**
 * The `*.jsonl` names of a folder (not hidden ones, not folders), sorted. Symlinks, FIFOs and devices
 * are listed too: reading one is where it is refused, with a problem line, rather than left out unseen.
 */
export function jsonlNames(files: SourceFiles, dir: string): string[] {
  return files.names(dir).filter((name) => name.endsWith(".jsonl"));
}

/** The sessions folder of a peer's home or workspace (`<path>/sessions`), or the path itself. */
export function sessionsDir(files: SourceFiles, path: string): string {
  const inner = join(path, "sessions");
  return files.isDirectory(inner) ? inner : path;
}
