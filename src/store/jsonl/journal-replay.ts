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
import { fsyncDir } from "./durable-fs.js";
import { isSessionFileName, stemOf } from "./file-names.js";
import { journalRecords } from "./journal-format.js";

export interface ReplayProblem {
  file: string;
  /** The record's number in the journal. */
  line: number;
  reason: string;
}

/**
 * Makes every session file hold what the journals of finished writers say it holds: bytes missing or
 * different at a record's offset are written there. A torn batch was never acknowledged.
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
    let byStem: Map<string, string> | undefined;
    const touched = new Set<string>();
    let record = 0;
    for (const item of journalRecords(readFileSync(path))) {
      record++;
      if (item.kind === "problem") {
        report({ file: path, line: record, reason: item.reason });
        break;
      }
      const { file: f, offset: o, bytes } = item;
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
