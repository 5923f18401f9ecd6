import { randomBytes } from "node:crypto";
import {
  closeSync,
  constants,
  existsSync,
  fstatSync,
  fsync,
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
 * batch's bytes for each file (a header `{f: file, o: offset, n: length}`, then the bytes) are appended and fsync'd,
 * then written to the session files without an fsync. A checkpoint fsyncs the session files and empties
 * the journal. Opening a directory first replays the journals of writers that are gone, so whatever
 * they acknowledged is in the session files even after a power cut. One journal per process.
 */
export class Journal {
  readonly path: string;
  private fd: number | undefined;
  private bytes = 0;
  /** Whether bytes were appended since the last fsync. */
  private dirty = false;

  constructor(dir: string) {
    this.path = join(dir, `journal-${process.pid}-${randomBytes(4).toString("hex")}.jsonl`);
  }

  get size(): number {
    return this.bytes;
  }

  /**
   * Appends the batch's records, each a header line `{"f","o","n"}` followed by its `n` bytes as they
   * go to the session file, in one write; returns each record's bytes (views of what was written).
   * `syncAsync` makes them durable.
   */
  append(records: ReadonlyArray<{ file: string; offset: number; text: string }>): Buffer[] {
    if (records.length === 0) return [];
    this.fd ??= openSync(this.path, constants.O_WRONLY | constants.O_CREAT | constants.O_APPEND);
    let all = "";
    const spans: Array<{ start: number; length: number }> = [];
    let at = 0;
    for (const r of records) {
      const length = Buffer.byteLength(r.text, "utf8");
      const header = `{"f":${JSON.stringify(r.file)},"o":${r.offset},"n":${length}}\n`;
      at += Buffer.byteLength(header, "utf8");
      spans.push({ start: at, length });
      at += length;
      all += header + r.text;
    }
    const buffer = Buffer.from(all, "utf8");
    writeAll(this.fd, buffer);
    this.bytes += buffer.length;
    this.dirty = true;
    return spans.map((s) => buffer.subarray(s.start, s.start + s.length));
  }

  /** Everything appended so far is on disk when this returns. */
  sync(): void {
    if (this.fd === undefined || !this.dirty) return;
    this.dirty = false;
    fsyncSync(this.fd);
  }

  /** Resolves once everything appended so far is on disk: the fsync runs off the event loop. */
  syncAsync(): Promise<void> {
    const fd = this.fd;
    if (fd === undefined || !this.dirty) return Promise.resolve();
    this.dirty = false;
    return new Promise((resolve, reject) =>
      fsync(fd, (error) => {
        if (error) this.dirty = true;
        return error ? reject(error) : resolve();
      }),
    );
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
  /** The record's number in the journal. */
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
    const journal = readFileSync(path);
    let byStem: Map<string, string> | undefined;
    const touched = new Set<string>();
    let at = 0;
    for (let record = 1; at < journal.length; record++) {
      const newline = journal.indexOf(10, at);
      if (newline === -1) break; // a torn header: never acknowledged
      let header: { f?: unknown; o?: unknown; n?: unknown };
      try {
        header = JSON.parse(journal.subarray(at, newline).toString("utf8")) as typeof header;
      } catch {
        report({
          file: path,
          line: record,
          reason: "journal header is not JSON; the rest of the journal is skipped",
        });
        break;
      }
      const { f, o, n } = header;
      if (
        typeof f !== "string" ||
        typeof o !== "number" ||
        typeof n !== "number" ||
        !isSessionFileName(f) ||
        /[/\\]/.test(f)
      ) {
        report({
          file: path,
          line: record,
          reason: "not a journal record; the rest of the journal is skipped",
        });
        break;
      }
      const start = newline + 1;
      if (start + n > journal.length) break; // a torn record: never acknowledged
      const bytes = journal.subarray(start, start + n);
      at = start + n;
      let file = join(sessionsDir, f);
      if (!existsSync(file)) {
        // Renamed since (a title): the untitled part of the name does not change.
        byStem ??= new Map(
          readdirSync(sessionsDir)
            .filter(isSessionFileName)
            .map((name) => [stemOf(name), name]),
        );
        const renamed = byStem.get(stemOf(f));
        if (renamed) file = join(sessionsDir, renamed);
        else if (o !== 0) {
          report({ file: path, line: record, reason: `${f} is gone` });
          continue;
        }
      }
      writeAt(file, o, bytes);
      touched.add(file);
    }
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
