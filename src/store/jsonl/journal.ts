import { randomBytes } from "node:crypto";
import {
  closeSync,
  constants,
  existsSync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  rmSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { fsyncDir, writeAll } from "./durable-fs.js";
import { isSessionFileName, stemOf } from "./file-names.js";

/**
 * The write-ahead journal that lets one fsync acknowledge a batch spread over many session files: each
 * batch's bytes for each file (`{f: file, o: offset, d: text}` per line) are appended here and fsync'd,
 * then written to the session files without an fsync. A checkpoint fsyncs the session files and empties
 * the journal. Opening a directory first replays the journals of writers that are gone, so whatever
 * they acknowledged is in the session files even after a power cut. One journal per process.
 */
export class Journal {
  readonly path: string;
  private fd: number | undefined;
  private bytes = 0;

  constructor(dir: string) {
    this.path = join(dir, `journal-${process.pid}-${randomBytes(4).toString("hex")}.jsonl`);
  }

  get size(): number {
    return this.bytes;
  }

  /** Appends the batch's records; with `durable`, they are on disk when this returns. */
  append(records: ReadonlyArray<{ file: string; offset: number; text: string }>, durable: boolean): void {
    if (records.length === 0) return;
    this.fd ??= openSync(this.path, constants.O_WRONLY | constants.O_CREAT | constants.O_APPEND);
    const text = records.map((r) => `${JSON.stringify({ f: r.file, o: r.offset, d: r.text })}\n`).join("");
    const buffer = Buffer.from(text, "utf8");
    writeAll(this.fd, buffer);
    if (durable) fsyncSync(this.fd);
    this.bytes += buffer.length;
  }

  /** Call once the session files are fsync'd: what the journal held is no longer needed. */
  reset(): void {
    if (this.fd === undefined || this.bytes === 0) return;
    ftruncateSync(this.fd, 0);
    fsyncSync(this.fd);
    this.bytes = 0;
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
    rmSync(this.path, { force: true });
  }
}

export interface ReplayProblem {
  file: string;
  line: number;
  reason: string;
}

/**
 * Makes every session file hold what the journals of finished writers say it holds: bytes missing or
 * different at a record's offset are written there. A torn last journal line was never acknowledged.
 */
export function replayJournals(
  metaDir: string,
  sessionsDir: string,
  report: (p: ReplayProblem) => void,
): void {
  for (const name of readdirSync(metaDir)) {
    const match = /^journal-(\d+)-[0-9a-f]+\.jsonl$/.exec(name);
    if (!match) continue;
    const pid = Number(match[1]);
    // A live writer (another process, or another store in this one) owns its journal.
    if (isAlive(pid)) continue;
    const path = join(metaDir, name);
    const lines = readFileSync(path, "utf8").split("\n");
    lines.pop(); // empty after the last newline, or a torn record
    let byStem: Map<string, string> | undefined;
    const touched = new Set<string>();
    lines.forEach((text, i) => {
      let record: { f?: unknown; o?: unknown; d?: unknown };
      try {
        record = JSON.parse(text) as typeof record;
      } catch {
        report({ file: path, line: i + 1, reason: "journal record is not JSON" });
        return;
      }
      const { f, o, d } = record;
      if (
        typeof f !== "string" ||
        typeof o !== "number" ||
        typeof d !== "string" ||
        !isSessionFileName(f) ||
        /[/\\]/.test(f)
      ) {
        report({ file: path, line: i + 1, reason: "not a journal record" });
        return;
      }
      let file = join(sessionsDir, f);
      if (!existsSync(file)) {
        // Renamed since (a title): the untitled part of the name does not change.
        byStem ??= new Map(
          readdirSync(sessionsDir)
            .filter(isSessionFileName)
            .map((n) => [stemOf(n), n]),
        );
        const renamed = byStem.get(stemOf(f));
        if (renamed) file = join(sessionsDir, renamed);
        else if (o !== 0) {
          report({ file: path, line: i + 1, reason: `${f} is gone` });
          return;
        }
      }
      writeAt(file, o, Buffer.from(d, "utf8"));
      touched.add(file);
    });
    if (touched.size > 0) fsyncDir(sessionsDir);
    rmSync(path, { force: true });
  }
}

function writeAt(file: string, offset: number, bytes: Buffer): void {
  const fd = openSync(file, constants.O_RDWR | constants.O_CREAT);
  try {
    const size = fstatSync(fd).size;
    if (size >= offset + bytes.length) {
      const present = Buffer.alloc(bytes.length);
      readSync(fd, present, 0, bytes.length, offset);
      if (present.equals(bytes)) return;
    }
    // A torn or missing tail: cut back to where the record starts, then write it.
    if (size > offset) ftruncateSync(fd, offset);
    let done = 0;
    while (done < bytes.length) done += writeSync(fd, bytes, done, bytes.length - done, offset + done);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
