import { mkdirSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";

/**
 * `mkdir -p` that always ends. Node's `{ recursive: true }` loops forever, at full CPU, where a directory
 * exists but cannot hold the child (procfs answers ENOENT for `/proc/x`, as does a dangling symlink):
 * it reads ENOENT as "the parent is missing", makes the parent (EEXIST), and tries the child again.
 * Here the missing ancestors are found once, then made top-down, and the first real error is thrown.
 */
export function makeDirSync(
  dir: string,
  fs: Pick<typeof import("node:fs"), "mkdirSync" | "statSync"> = {
    mkdirSync,
    statSync,
  },
): void {
  for (const missing of missingAncestors(resolve(dir), (path) => fs.statSync(path).isDirectory())) {
    try {
      fs.mkdirSync(missing);
    } catch (error) {
      if (code(error) !== "EEXIST") throw error;
    }
  }
}

/** The ancestors of `dir` (itself included) that do not exist, outermost first. */
function missingAncestors(dir: string, isDirectory: (path: string) => boolean): string[] {
  const missing: string[] = [];
  for (let at = dir; ; at = dirname(at)) {
    try {
      if (isDirectory(at)) return missing;
      throw notADirectory(at);
    } catch (error) {
      if (code(error) !== "ENOENT" || dirname(at) === at) throw error;
      missing.unshift(at);
    }
  }
}

function notADirectory(path: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`ENOTDIR: not a directory, mkdir '${path}'`), { code: "ENOTDIR", path });
}

function code(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}
