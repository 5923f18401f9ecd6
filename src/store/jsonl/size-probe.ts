import type { FileSystem } from "./durable-fs.js";

const probe = Buffer.alloc(2);

/**
 * Whether the file open as `fd` (readable) is `size` bytes long: one read across where it should end.
 * About 1 µs cheaper per append than an fstat, which builds a stats object (and its dates) each time.
 */
export function hasSize(fs: FileSystem, fd: number, size: number): boolean {
  if (size === 0) return fs.readSync(fd, probe, 0, 1, 0) === 0;
  return fs.readSync(fd, probe, 0, 2, size - 1) === 1;
}
