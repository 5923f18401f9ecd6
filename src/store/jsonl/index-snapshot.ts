import { join } from "node:path";
import type { Session } from "../../model/session.js";
import { type FileSystem, realFs, writeFileAtomic } from "./durable-fs.js";

/** What the index keeps of one session file, so that opening a directory need not read it. */
export interface IndexedFile {
  file: string;
  size: number;
  mtimeMs: number;
  foreign: boolean;
  session: Session;
}

const VERSION = 1;

/**
 * The index of a directory: written at close, consumed (removed) at open, so it is trusted only when the
 * previous writer closed cleanly; each file's size and mtime must still match, else the file is read.
 * Missing or stale, it is rebuilt from the files.
 */
export function takeSnapshot(path: string, fs: FileSystem = realFs): Map<string, IndexedFile> {
  const byFile = new Map<string, IndexedFile>();
  let text: string;
  try {
    text = fs.readFileSync(path, "utf8");
  } catch {
    return byFile;
  }
  fs.rmSync(path, { force: true });
  try {
    const value = JSON.parse(text) as { version?: unknown; files?: unknown };
    if (value.version !== VERSION || !Array.isArray(value.files)) return byFile;
    for (const record of value.files as IndexedFile[]) byFile.set(record.file, record);
  } catch {
    // An unreadable index is rebuilt from the files.
  }
  return byFile;
}

export function saveSnapshot(path: string, files: Iterable<IndexedFile>, fs: FileSystem = realFs): void {
  const records: string[] = [];
  for (const record of files) records.push(JSON.stringify(record));
  writeFileAtomic(path, `{"version":${VERSION},"files":[${records.join(",\n")}]}`, false, fs);
}

/**
 * Saves the index of `files` (the directory's sessions) at close; the size and mtime of those written
 * since open (`touched`) are read again first.
 */
export function saveDirectoryIndex(
  path: string,
  dir: string,
  files: Iterable<IndexedFile>,
  touched: ReadonlySet<IndexedFile>,
  fs: FileSystem = realFs,
): void {
  const records: IndexedFile[] = [];
  for (const t of files) {
    if (touched.has(t)) {
      const stat = fs.statSync(join(dir, t.file));
      t.size = stat.size;
      t.mtimeMs = stat.mtimeMs;
    }
    records.push({ file: t.file, size: t.size, mtimeMs: t.mtimeMs, foreign: t.foreign, session: t.session });
  }
  saveSnapshot(path, records, fs);
}
