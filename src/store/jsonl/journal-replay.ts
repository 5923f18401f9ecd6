import { constants } from "node:fs";
import { join } from "node:path";
import { type FileSystem, fsyncDir, fsyncOrFail, realFs } from "./durable-fs.js";
import { isSessionFileName, stemOf } from "./file-names.js";
import { journalRecords } from "./journal-format.js";
import { ownerMayBeRunning, parseJournalName } from "./journal-owner.js";

export interface ReplayProblem {
  file: string;
  /** The record's number in the journal. */
  line: number;
  reason: string;
}

/**
 * Makes every session file hold what the journals of finished writers say it holds: bytes missing at a
 * record's offset (or zeros there, a tail the power cut left unwritten) are written there. A torn batch
 * was never acknowledged. Bytes that differ are never overwritten or cut: they were written since (by
 * another process), and the record is reported instead.
 */
export function replayJournals(
  metaDir: string,
  sessionsDir: string,
  report: (p: ReplayProblem) => void,
  fs: FileSystem = realFs,
): void {
  for (const name of fs.readdirSync(metaDir)) {
    const owner = parseJournalName(name);
    if (!owner || ownerMayBeRunning(name, owner)) continue;
    const path = join(metaDir, name);
    let byStem: Map<string, string> | undefined;
    const touched = new Set<string>();
    let record = 0;
    for (const item of journalRecords(fs.readFileSync(path))) {
      record++;
      if (item.kind === "problem") {
        report({ file: path, line: record, reason: item.reason });
        break;
      }
      const { file: f, offset: o, bytes } = item;
      let file = join(sessionsDir, f);
      if (!fs.existsSync(file)) {
        // Renamed since (a title): the untitled part of the name does not change.
        byStem ??= new Map(
          fs
            .readdirSync(sessionsDir)
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
      if (!writeAt(fs, file, o, bytes))
        report({
          file: path,
          line: record,
          reason: `${f} holds other bytes at offset ${o}, written since; the record is not replayed`,
        });
      touched.add(file);
    }
    if (touched.size > 0) fsyncDir(sessionsDir, fs);
    fs.rmSync(path, { force: true });
  }
}

/** Writes `bytes` at `offset` unless the file holds other bytes there (zeros aside); false then. */
function writeAt(fs: FileSystem, file: string, offset: number, bytes: Buffer): boolean {
  const fd = fs.openSync(file, constants.O_RDWR | constants.O_CREAT);
  try {
    const size = fs.fstatSync(fd).size;
    const present = Buffer.alloc(Math.max(0, Math.min(bytes.length, size - offset)));
    if (present.length > 0) fs.readSync(fd, present, 0, present.length, offset);
    if (present.length === bytes.length && present.equals(bytes)) return true;
    for (let i = 0; i < present.length; i++) if (present[i] !== 0 && present[i] !== bytes[i]) return false;
    let done = 0;
    while (done < bytes.length) done += fs.writeSync(fd, bytes, done, bytes.length - done, offset + done);
    fsyncOrFail(fs, fd, file);
    return true;
  } finally {
    fs.closeSync(fd);
  }
}
