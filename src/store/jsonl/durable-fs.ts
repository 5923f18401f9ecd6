import { randomBytes } from "node:crypto";
import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";

/** Makes the directory's entries (files created, renamed or removed in it) durable. */
export function fsyncDir(dir: string): void {
  const fd = openSync(dir, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Replaces `path` so that a crash leaves either the old bytes or the new ones: a temp file in the same
 * directory, fsync, rename over, fsync of the directory. A failure removes the temp file.
 */
export function writeFileAtomic(path: string, data: string | Buffer, durable = true): void {
  const temp = join(dirname(path), `.${basename(path)}.${randomBytes(4).toString("hex")}.tmp`);
  try {
    const fd = openSync(temp, "wx");
    try {
      writeSync(fd, typeof data === "string" ? Buffer.from(data, "utf8") : data);
      if (durable) fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, path);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
  if (durable) fsyncDir(dirname(path));
}

/**
 * Writes all of `buffer` (writeSync may write less than asked): at `position`, or where the descriptor is.
 * Returns the bytes written.
 */
export function writeAll(fd: number, buffer: Buffer, position?: number): number {
  let done = 0;
  while (done < buffer.length) {
    const at = position === undefined ? null : position + done;
    done += writeSync(fd, buffer, done, buffer.length - done, at);
  }
  return done;
}
