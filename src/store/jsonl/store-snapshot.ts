import { randomBytes } from "node:crypto";
import { type Dirent, linkSync, mkdirSync, readdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { SessiondError } from "../../model/errors.js";
import { isSessionFileName } from "./file-names.js";
import { type JournalOwner, processMayBeRunning, selfOwner } from "./journal-owner.js";
import { META_DIR } from "./meta-dir.js";

/** A file of the store as it was at the snapshot's instant. */
export interface SnapshotFile {
  /** Its path in the store, `/`-separated (`.sessiond/meta/….json`). */
  name: string;
  /**
   * A hard link to the file as it was then (its inode: a later rename or replacement leaves it be); for a
   * claim, which never changes, the file itself.
   */
  link: string;
  /**
   * Its length then: what was appended since is past it. Only line files are appended to; any other is
   * never changed in place, so its length is read from the link when it is copied (`undefined` here).
   */
  size: number | undefined;
}

export interface StoreSnapshot {
  /** The snapshot's folder, `.sessiond/backup-…/`, removed by `release`. */
  dir: string;
  files: SnapshotFile[];
  /** SQLite databases beside the store (their own consistent copy is taken with SQLite's backup API). */
  databases: Array<{ name: string; path: string }>;
  takenAt: number;
  release(): void;
}

const PREFIX = "backup-";
const CLAIMS = `${META_DIR}/claims/`;
/** Rebuilt from the files at open, or a writer's own: never part of a copy. */
const LEFT_OUT = /^(journal-.*|index\.json|search\.db.*|search\.json|.*\.tmp|.*-wal|.*-shm|.*-journal)$/;
/** The snapshots this process is taking (another process's are told apart by their owner). */
const ownSnapshots = new Set<string>();

/**
 * The store's files as they are at this instant, without copying them: every session file and every
 * file of `.sessiond/` (sidecars, claims, the inbox, agent settings) is hard-linked into a folder of its
 * own, with its length now. Call it where no commit can run (synchronously, between batches, after the
 * bytes the journal holds went to the files): session files and the inbox are only appended to, and
 * every other change (a title's rewrite, a sidecar, a pruned inbox, a removal) replaces or unlinks a
 * file, which leaves the linked inode as it was. So the links cut at those lengths are the store at one
 * instant, however long the copy then takes. It costs one link per file (claims aside) and one stat per
 * line file, and no bytes.
 */
export function linkSnapshot(storeDir: string): StoreSnapshot {
  const metaDir = join(storeDir, META_DIR);
  removeStaleSnapshots(metaDir);
  const owner = selfOwner();
  const name = `${PREFIX}${owner.pid}-${owner.start || "0"}-${owner.boot || "0"}-${randomBytes(4).toString("hex")}`;
  const dir = join(metaDir, name);
  mkdirSync(dir);
  ownSnapshots.add(name);
  const release = () => {
    rmSync(dir, { recursive: true, force: true });
    ownSnapshots.delete(name);
  };
  const files: SnapshotFile[] = [];
  const databases: StoreSnapshot["databases"] = [];
  const take = (path: string, name: string) => {
    const link = join(dir, String(files.length));
    try {
      linkSync(path, link);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // Gone since the directory was read (another process removed it): not part of this instant.
      if (code === "ENOENT") return;
      throw new SessiondError(
        "STORE_UNAVAILABLE",
        `a consistent copy of ${storeDir} needs hard links, and ${path} could not be linked (${code ?? String(error)}); ` +
          `stop the gateway and copy the directory instead`,
        { cause: error },
      );
    }
    files.push({ name, link, size: name.endsWith(".jsonl") ? statSync(link).size : undefined });
  };
  try {
    for (const entry of readdirSync(storeDir, { withFileTypes: true }))
      if (entry.isFile() && isSessionFileName(entry.name)) take(join(storeDir, entry.name), entry.name);
    walkMeta(metaDir, META_DIR, (entry, path, name) => {
      if (entry.name.endsWith(".db")) databases.push({ name, path });
      // A claim is written whole when its file is created and never changed or removed: read where it is.
      else if (name.startsWith(CLAIMS)) files.push({ name, link: path, size: undefined });
      else take(path, name);
    });
  } catch (error) {
    release();
    throw error;
  }
  return { dir, files, databases, takenAt: Date.now(), release };
}

/** Every regular file under `.sessiond/` a copy keeps, subfolders included, snapshots left out. */
function walkMeta(
  dir: string,
  prefix: string,
  visit: (entry: Dirent, path: string, name: string) => void,
): void {
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
    throw error;
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    const name = `${prefix}/${entry.name}`;
    if (entry.isDirectory()) {
      if (!(prefix === META_DIR && entry.name.startsWith(PREFIX))) walkMeta(path, name, visit);
    } else if (entry.isFile() && !LEFT_OUT.test(entry.name)) visit(entry, path, name);
  }
}

/** Snapshot folders whose process is gone (it stopped mid-copy): their links only hold disk space. */
export function removeStaleSnapshots(metaDir: string): void {
  let names: string[];
  try {
    names = readdirSync(metaDir);
  } catch {
    return;
  }
  for (const name of names) {
    const owner = snapshotOwner(name);
    if (!owner || ownSnapshots.has(name) || processMayBeRunning(owner)) continue;
    rmSync(join(metaDir, name), { recursive: true, force: true });
  }
}

function snapshotOwner(name: string): JournalOwner | undefined {
  const match = /^backup-(\d+)-(\d+)-([0-9a-f]+)-[0-9a-f]+$/.exec(name);
  if (!match) return undefined;
  const known = (text: string | undefined) => (text === undefined || text === "0" ? "" : text);
  return { pid: Number(match[1]), start: known(match[2]), boot: known(match[3]) };
}
