import { join } from "node:path";
import type { Session } from "../../model/session.js";
import { readClaimIdentity } from "./claim-identity.js";
import { type FileSystem, fsyncOrFail, realFs, writeAll } from "./durable-fs.js";
import { isSessionFileName, parseStem, stemOf } from "./file-names.js";
import { takeSnapshot } from "./index-snapshot.js";
import { type KnownIdentity, type LineProblem, parseSessionFile } from "./session-file.js";
import { applySidecar, type Sidecars } from "./sidecar.js";

/** What the store holds in memory of one session file. */
export interface Tracked {
  session: Session;
  /** The file's current name in the directory (changes when titled). */
  file: string;
  foreign: boolean;
  size: number;
  mtimeMs: number;
}

export interface DirectoryScan {
  tracked: Tracked[];
  filesRead: number;
  filesFromIndex: number;
}

/**
 * Every session file of the directory: from the index where a file's size and mtime still match it,
 * else read (and repaired) from the file. Only regular files: a symlink named like a session never leads
 * outside the directory.
 */
export function scanDirectory(
  path: string,
  metaDir: string,
  sidecars: Sidecars,
  report: (problem: LineProblem) => void,
  fs: FileSystem = realFs,
): DirectoryScan {
  const snapshot = takeSnapshot(join(metaDir, "index.json"), fs);
  const sidecarIds = new Set(
    fs
      .readdirSync(join(metaDir, "meta"))
      .filter((n) => n.endsWith(".json"))
      .map((n) => n.slice(0, -5)),
  );
  const scan: DirectoryScan = { tracked: [], filesRead: 0, filesFromIndex: 0 };
  for (const dirent of fs.readdirSync(path, { withFileTypes: true })) {
    if (!dirent.isFile() || !isSessionFileName(dirent.name)) continue;
    const stat = fs.statSync(join(path, dirent.name));
    const known = snapshot.get(dirent.name);
    let tracked: Tracked | undefined;
    if (known && known.size === stat.size && known.mtimeMs === stat.mtimeMs) {
      tracked = { ...known };
      scan.filesFromIndex++;
    } else {
      const identity = known?.session ?? readClaimIdentity(fs, join(metaDir, "claims"), stemOf(dirent.name));
      tracked = readTrackedFile(path, dirent.name, sidecars, report, fs, {
        sidecarIds,
        stat,
        ...(identity ? { identity } : {}),
      });
      scan.filesRead++;
    }
    if (tracked) scan.tracked.push(tracked);
  }
  return scan;
}

/**
 * Reads and repairs one file: a torn last line is cut back, every complete line kept. `identity`: who the
 * file belongs to as far as the store knows, for a file whose metadata line is damaged.
 */
export function readTrackedFile(
  dir: string,
  file: string,
  sidecars: Sidecars,
  report: (problem: LineProblem) => void,
  fs: FileSystem = realFs,
  known: {
    sidecarIds?: Set<string>;
    stat?: { size: number; mtimeMs: number };
    identity?: KnownIdentity;
  } = {},
): Tracked | undefined {
  const path = join(dir, file);
  const bytes = fs.readFileSync(path);
  if (bytes.length === 0) return undefined;
  const { parsed, problems } = parseSessionFile(file, bytes, known.identity);
  for (const problem of problems) report(problem);
  if (!parsed) {
    // Nothing but a torn metadata line: a creation that never completed, holding nothing acknowledged.
    if (bytes.indexOf(10) === -1) ftruncate(fs, path, 0);
    return undefined;
  }
  if (parsed.tornTail) ftruncate(fs, path, parsed.completeBytes);
  else if (parsed.missingNewline) appendNewline(fs, path);
  if (!known.sidecarIds || known.sidecarIds.has(parsed.session.id))
    applySidecar(parsed.session, sidecars.read(parsed.session.id));
  const repaired = parsed.tornTail || parsed.missingNewline;
  const stat = known.stat && !repaired ? known.stat : fs.statSync(path);
  return { session: parsed.session, file, foreign: parsed.foreign, size: stat.size, mtimeMs: stat.mtimeMs };
}

/**
 * Orders one key's sessions by creation. Files CrabTalk wrote say nothing of generations: when any is
 * among them the sessions are numbered by creation, and only the newest active one stays current (the
 * others read as archived).
 */
export function settleKey(list: Tracked[]): void {
  const fileSeq = (t: Tracked) => parseStem(stemOf(t.file))?.seq ?? 0;
  list.sort(
    (a, b) =>
      a.session.createdAt - b.session.createdAt ||
      fileSeq(a) - fileSeq(b) ||
      (a.session.id < b.session.id ? -1 : 1),
  );
  if (list.some((t) => t.foreign)) {
    for (const [i, t] of list.entries()) t.session.generation = i + 1;
  }
  const active = list.filter((t) => t.session.state === "active");
  for (const stale of active.slice(0, -1)) {
    stale.session.state = "archived";
    stale.session.archivedAt ??= stale.session.lastActivityAt;
  }
}

function ftruncate(fs: FileSystem, path: string, length: number): void {
  const fd = fs.openSync(path, "r+");
  try {
    fs.ftruncateSync(fd, length);
    fsyncOrFail(fs, fd, path);
  } finally {
    fs.closeSync(fd);
  }
}

function appendNewline(fs: FileSystem, path: string): void {
  const fd = fs.openSync(path, "a");
  try {
    writeAll(fd, Buffer.from("\n"), undefined, fs);
    fsyncOrFail(fs, fd, path);
  } finally {
    fs.closeSync(fd);
  }
}
