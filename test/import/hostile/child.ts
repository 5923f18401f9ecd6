import { spawnSync } from "node:child_process";
import { join } from "node:path";
import type { ImportReport } from "../../../src/import/importer.js";
import type { ImportSource } from "../../../src/import/types.js";

export interface ChildImport {
  /** Undefined when the child did not finish (it hung or died): the import failed the test. */
  report?: ImportReport;
  maxRssBytes?: number;
  /** How the child ended when it did not print a report. */
  failure?: string;
}

/**
 * An import in a child process, killed if it has not finished within `killAfterMs` (a hang on the old
 * code must fail the test, not stall the runner). Not a timing assertion: a healthy import of these
 * folders finishes in well under a second; the limit only bounds a hang.
 */
export function importInChild(
  source: ImportSource,
  path: string,
  db: string,
  limits?: object,
  killAfterMs = 30_000,
): ChildImport {
  const run = spawnSync(
    process.execPath,
    [
      "--max-old-space-size=1024",
      "--import",
      "tsx",
      join(import.meta.dirname, "run-import.ts"),
      source,
      path,
      db,
      ...(limits ? [JSON.stringify(limits)] : []),
    ],
    { encoding: "utf8", timeout: killAfterMs, killSignal: "SIGKILL", maxBuffer: 64 * 1024 * 1024 },
  );
  const line = run.stdout?.trim().split("\n").at(-1);
  if (run.status === 0 && line) return JSON.parse(line) as ChildImport;
  return {
    failure: `status ${run.status}, signal ${run.signal}, error ${run.error?.message ?? ""}: ${run.stderr?.slice(-500)}`,
  };
}
