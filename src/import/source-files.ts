import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  readdirSync,
  readSync,
  realpathSync,
  type Stats,
  statSync,
} from "node:fs";
import { dirname, isAbsolute, relative } from "node:path";
import { parseCappedJson } from "./json-text.js";
import { DEFAULT_IMPORT_LIMITS, type ImportLimits, sizeText } from "./limits.js";
import type { ImportProblem } from "./types.js";

export type Where = Omit<ImportProblem, "reason">;

/**
 * The one way an import touches the source folder. A symlink is followed only to a regular file inside
 * the folder; FIFOs, devices and sockets are never opened (a FIFO would hang the read, `/dev/zero` would
 * fill memory); every read is capped and counted against the import's budget. Each refusal is one problem
 * with the file's path, and the caller goes on with the rest.
 */
export class SourceFiles {
  readonly root: string;
  readonly limits: ImportLimits;
  readonly problems: ImportProblem[] = [];
  /** What is left out on purpose (no history in it, or already read elsewhere), one line each. */
  readonly leftOut: ImportProblem[] = [];
  private spent = 0;
  private readonly given: string;

  constructor(path: string, limits: Partial<ImportLimits> = {}) {
    this.given = path;
    const real = realpathSync(path);
    this.root = statSync(real).isDirectory() ? real : dirname(real);
    this.limits = { ...DEFAULT_IMPORT_LIMITS, ...limits };
  }

  /** Whether `path` is something there (without following a symlink): a missing index is not a problem. */
  exists(path: string): boolean {
    try {
      lstatSync(path);
      return true;
    } catch {
      return false;
    }
  }

  /**
   * A directory: the folder the operator named (which may be a symlink), one inside it, or a symlink to
   * one inside it. A symlink to a folder outside is a problem line and false.
   */
  isDirectory(path: string): boolean {
    try {
      if (path === this.given) return statSync(path).isDirectory();
      const link = lstatSync(path);
      if (!link.isSymbolicLink()) return link.isDirectory();
      const real = realpathSync(path);
      if (!statSync(real).isDirectory()) return false;
      if (this.inside(real)) return true;
      this.problems.push({
        file: path,
        reason: `a symlink to ${real}, outside the source folder; not followed`,
      });
      return false;
    } catch {
      return false;
    }
  }

  /** The names in a folder that are not folders and not hidden, sorted: each is checked when read. */
  names(dir: string): string[] {
    try {
      return readdirSync(dir, { withFileTypes: true })
        .filter((d) => !d.isDirectory() && !d.name.startsWith("."))
        .map((d) => d.name)
        .sort();
    } catch (error) {
      this.problems.push({ file: dir, reason: `cannot list: ${(error as Error).message}` });
      return [];
    }
  }

  /** The real path of a regular file inside the folder, else undefined with a problem. */
  regularFile(file: string): string | undefined {
    let real: string;
    let stat: Stats;
    try {
      real = realpathSync(file);
      stat = statSync(real);
    } catch (error) {
      this.problems.push({ file, reason: `cannot read: ${(error as Error).message}` });
      return undefined;
    }
    if (!this.inside(real)) {
      this.problems.push({
        file,
        reason: `a symlink to ${real}, outside the source folder; not followed`,
      });
      return undefined;
    }
    if (!stat.isFile()) {
      this.problems.push({ file, reason: `${kindOf(stat)}, not a regular file; skipped` });
      return undefined;
    }
    return real;
  }

  /** A file's bytes, at most `fileBytes` of them, from a file that stays a regular file while it is read. */
  read(file: string): Buffer | undefined {
    const real = this.regularFile(file);
    if (!real) return undefined;
    let fd: number | undefined;
    try {
      // O_NONBLOCK: if the file was swapped for a FIFO since the check, opening it does not wait.
      fd = openSync(real, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
      const stat = fstatSync(fd);
      if (!stat.isFile()) {
        this.problems.push({ file, reason: `${kindOf(stat)}, not a regular file; skipped` });
        return undefined;
      }
      if (stat.size > this.limits.fileBytes) {
        this.problems.push({
          file,
          reason: `${sizeText(stat.size)}, over the cap of ${sizeText(this.limits.fileBytes)} for one file; skipped`,
        });
        return undefined;
      }
      if (!this.spend(stat.size, { file })) return undefined;
      const buffer = Buffer.alloc(stat.size);
      let at = 0;
      while (at < buffer.length) {
        const n = readSync(fd, buffer, at, buffer.length - at, at);
        if (n === 0) break;
        at += n;
      }
      return buffer.subarray(0, at);
    } catch (error) {
      this.problems.push({ file, reason: `cannot read: ${(error as Error).message}` });
      return undefined;
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  }

  text(file: string): string | undefined {
    return this.read(file)?.toString("utf8");
  }

  /** Counts decompressed or row bytes against the import's budget; false (and a problem) once it is spent. */
  spend(bytes: number, where: Where): boolean {
    this.spent += bytes;
    if (this.spent <= this.limits.totalBytes) return true;
    this.problems.push({
      ...where,
      reason: `the import has read ${sizeText(this.limits.totalBytes)}, its cap; skipped`,
    });
    return false;
  }

  /** One JSON text behind the line and nesting caps; undefined (and a problem at `where`) when refused. */
  json(text: string, where: Where, what = "", maxChars = this.limits.lineBytes): unknown {
    const read = parseCappedJson(text, maxChars, this.limits.jsonDepth);
    if ("value" in read) return read.value;
    this.problems.push({ ...where, reason: what ? `${what} ${read.error}` : read.error });
    return undefined;
  }

  private inside(real: string): boolean {
    const rel = relative(this.root, real);
    return rel !== "" && !rel.startsWith("..") && !isAbsolute(rel);
  }
}

function kindOf(stat: Stats): string {
  if (stat.isFIFO()) return "a FIFO";
  if (stat.isCharacterDevice() || stat.isBlockDevice()) return "a device";
  if (stat.isSocket()) return "a socket";
  if (stat.isDirectory()) return "a folder";
  return "not a file";
}
