import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, renameSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * Builds the LD_PRELOAD layer of fsync-faults.c (once per version of the source) and returns its path.
 * Needs a C compiler, which building better-sqlite3 needs too.
 */
export function fsyncFaultLibrary(): string {
  const source = new URL("./fsync-faults.c", import.meta.url).pathname;
  const hash = createHash("sha256").update(readFileSync(source)).digest("hex").slice(0, 12);
  const library = join(tmpdir(), `sessiond-fsync-faults-${hash}.so`);
  if (!existsSync(library)) {
    const building = `${library}.${process.pid}`;
    execFileSync("cc", ["-shared", "-fPIC", "-O2", "-o", building, source, "-ldl"]);
    renameSync(building, library);
  }
  return library;
}

/**
 * The environment of a child whose fsyncs of `path` fail with EIO while the file `arm` exists, or with
 * `slowMs`, succeed that many milliseconds late.
 */
export function fsyncFaultEnv(path: string, arm: string, slowMs?: number): NodeJS.ProcessEnv {
  return {
    ...process.env,
    LD_PRELOAD: fsyncFaultLibrary(),
    FSYNC_FAULT_PATH: path,
    FSYNC_FAULT_ARM: arm,
    ...(slowMs === undefined ? {} : { FSYNC_FAULT_SLOW_MS: String(slowMs) }),
  };
}

/** The environment of a child whose writes to `path` fail with ENOSPC while the file `arm` exists. */
export function enospcFaultEnv(path: string, arm: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    LD_PRELOAD: fsyncFaultLibrary(),
    FSYNC_FAULT_PATH: path,
    FSYNC_FAULT_ENOSPC_ARM: arm,
  };
}
