import { randomBytes } from "node:crypto";
import * as nodeFs from "node:fs";
import { basename, dirname, join } from "node:path";
import { SessiondError } from "../../model/errors.js";

/**
 * The file calls the JSONL store makes, all through one object: node:fs in production, and in tests a
 * layer that injects faults (ENOSPC, EIO from fsync) or cuts the power (drops whatever was not fsync'd).
 */
export type FileSystem = Pick<
  typeof nodeFs,
  | "closeSync"
  | "existsSync"
  | "fdatasync"
  | "fdatasyncSync"
  | "fstatSync"
  | "fsyncSync"
  | "ftruncateSync"
  | "mkdirSync"
  | "openSync"
  | "readdirSync"
  | "readFileSync"
  | "readSync"
  | "renameSync"
  | "rmSync"
  | "statSync"
  | "writeSync"
  | "writevSync"
>;

export const realFs: FileSystem = nodeFs;

/**
 * An fsync that failed: the kernel may have dropped the dirty pages, so a later fsync that succeeds proves
 * nothing. The store stops (fail-stop) with this error.
 */
export function fsyncFailed(what: string, error: unknown): SessiondError {
  return new SessiondError(
    "STORE_FAILED",
    `fsync of ${what} failed: ${error instanceof Error ? error.message : String(error)}`,
    { cause: error },
  );
}

/** fsync(2), a failure of which is `STORE_FAILED`. */
export function fsyncOrFail(fs: FileSystem, fd: number, what: string): void {
  try {
    fs.fsyncSync(fd);
  } catch (error) {
    throw fsyncFailed(what, error);
  }
}

/** Makes the directory's entries (files created, renamed or removed in it) durable. */
export function fsyncDir(dir: string, fs: FileSystem = realFs): void {
  const fd = fs.openSync(dir, "r");
  try {
    fsyncOrFail(fs, fd, `the directory ${dir}`);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Replaces `path` so that a crash leaves either the old bytes or the new ones: a temp file in the same
 * directory, fsync, rename over, fsync of the directory. A failure removes the temp file.
 */
export function writeFileAtomic(
  path: string,
  data: string | Buffer,
  durable = true,
  fs: FileSystem = realFs,
): void {
  const temp = join(dirname(path), `.${basename(path)}.${randomBytes(4).toString("hex")}.tmp`);
  try {
    const fd = fs.openSync(temp, "wx");
    try {
      writeAll(fd, typeof data === "string" ? Buffer.from(data, "utf8") : data, undefined, fs);
      if (durable) fsyncOrFail(fs, fd, path);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(temp, path);
  } catch (error) {
    fs.rmSync(temp, { force: true });
    throw error;
  }
  if (durable) fsyncDir(dirname(path), fs);
}

/**
 * Writes all of `buffer` (writeSync may write less than asked): at `position`, or where the descriptor is.
 * Returns the bytes written.
 */
export function writeAll(fd: number, buffer: Buffer, position?: number, fs: FileSystem = realFs): number {
  let done = 0;
  while (done < buffer.length) {
    const at = position === undefined ? null : position + done;
    done += fs.writeSync(fd, buffer, done, buffer.length - done, at);
  }
  return done;
}
