import { constants } from "node:fs";
import { join, resolve } from "node:path";
import Database from "better-sqlite3";
import { SEARCH_SCHEMA } from "../../search/sqlite/search-schema.js";
import { type FileSystem, fsyncDir, fsyncOrFail, writeFileAtomic } from "./durable-fs.js";
import { processMayBeRunning, selfOwner } from "./journal-owner.js";

/** The sidecar index of a JSONL directory, in its meta directory, and the record its owner writes at close. */
export const SEARCH_DB = "search.db";
export const SEARCH_RECORD = "search.json";
const VERSION = 1;
/** The index's page cache: what memory it takes, whatever its size on disk. */
const PAGE_CACHE_KB = 16 * 1024;

/**
 * The search tables of the SQLite store (search-index.ts runs on them unchanged) over a mirror of the
 * sessions they point at. `size` and `mtime` are what the session's file measured when its rows were last
 * made whole; `stale` marks a session whose rows must be built again from its file.
 */
const SCHEMA = `
CREATE TABLE sessions (
  sid INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  key TEXT NOT NULL,
  generation INTEGER NOT NULL,
  state TEXT NOT NULL,
  agent TEXT NOT NULL,
  channel TEXT NOT NULL,
  size INTEGER NOT NULL DEFAULT -1,
  mtime REAL,
  stale INTEGER NOT NULL DEFAULT 1
);
CREATE INDEX sessions_key ON sessions (key, generation);
CREATE INDEX sessions_stale ON sessions (sid) WHERE stale = 1;
CREATE TABLE owner (one INTEGER PRIMARY KEY CHECK (one = 1), pid INTEGER NOT NULL, start TEXT NOT NULL,
  boot TEXT NOT NULL);
${SEARCH_SCHEMA}
INSERT INTO search_state (one, backfill_after) VALUES (1, NULL);
PRAGMA user_version = ${VERSION};
`;

/** The sidecar indexes owned by stores of this process (another process cannot tell them apart). */
const ownedHere = new Set<string>();

export interface SearchDb {
  db: Database.Database;
  path: string;
  /** This store writes the index; another process (or store) that owns it is only read from. */
  owner: boolean;
  /** The index was closed cleanly by its last owner and is unchanged since: its rows may be kept. */
  trusted: boolean;
}

interface CloseRecord {
  version: number;
  size: number;
  mtimeMs: number;
}

/**
 * Opens the sidecar index and claims it. The first store to open it owns it (the claim is a row written
 * under SQLite's write lock, the owner named as journals are: PID, start time, boot); it is kept only if
 * its last owner closed it cleanly and it is unchanged since (the close record matches), else it is
 * replaced by an empty one, whose sessions are then indexed from their files.
 */
export function openSearchDb(metaDir: string, fs: FileSystem): SearchDb {
  const path = resolve(metaDir, SEARCH_DB);
  const before = statOf(fs, path);
  const record = takeRecord(fs, join(metaDir, SEARCH_RECORD));
  let db: Database.Database | undefined;
  try {
    db = connect(path);
    const claim = claimOwner(db, path);
    if (claim === "other") return { db, path, owner: false, trusted: true };
    if (claim === "new") return { db, path, owner: true, trusted: false };
    const unchanged =
      before !== undefined &&
      record?.version === VERSION &&
      record.size === before.size &&
      record.mtimeMs === before.mtimeMs;
    if (unchanged && db.pragma("user_version", { simple: true }) === VERSION)
      return { db, path, owner: true, trusted: true };
  } catch {
    // Not a database, or a damaged one: replaced below.
  }
  db?.close();
  return { db: replace(path, fs), path, owner: true, trusted: false };
}

/** A new, empty index under `path`: built beside it with this process's claim, then renamed over it. */
function replace(path: string, fs: FileSystem): Database.Database {
  const temp = `${path}.${process.pid}.new`;
  fs.rmSync(temp, { force: true });
  const fresh = connect(temp);
  if (claimOwner(fresh, path) !== "new") throw new Error(`${temp} is not a new file`);
  fresh.close();
  fs.renameSync(temp, path);
  fsyncDir(join(path, ".."), fs);
  const db = connect(path);
  ownedHere.add(path);
  return db;
}

function connect(path: string): Database.Database {
  const db = new Database(path);
  // Derived data: a crash leaves the index untrusted (no close record), so it is never fsync'd while in
  // use, and its rollback journal lives in memory.
  db.pragma("journal_mode = MEMORY");
  db.pragma("synchronous = OFF");
  db.pragma("busy_timeout = 2000");
  db.pragma("temp_store = MEMORY");
  db.pragma(`cache_size = ${-PAGE_CACHE_KB}`);
  return db;
}

/** Claims the index for this store: `new` (an empty file, schema created), `mine`, or `other` (owned). */
function claimOwner(db: Database.Database, path: string): "new" | "mine" | "other" {
  return db
    .transaction(() => {
      const me = selfOwner();
      const hasSchema = db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'owner'").get() !== undefined;
      if (!hasSchema) db.exec(SCHEMA);
      else {
        const row = db.prepare("SELECT pid, start, boot FROM owner").get() as
          | { pid: number; start: string; boot: string }
          | undefined;
        if (row && (ownedHere.has(path) || processMayBeRunning(row))) return "other";
      }
      db.prepare("INSERT OR REPLACE INTO owner (one, pid, start, boot) VALUES (1, ?, ?, ?)").run(
        me.pid,
        me.start,
        me.boot,
      );
      ownedHere.add(path);
      return hasSchema ? "mine" : "new";
    })
    .immediate();
}

/**
 * Releases the index: an owner gives up its claim and, when `clean` (everything it indexed is whole),
 * makes the file durable and records its size and mtime, which the next owner checks before keeping it.
 */
export function closeSearchDb(search: SearchDb, clean: boolean, fs: FileSystem): void {
  const { db, path, owner } = search;
  try {
    if (owner) db.prepare("DELETE FROM owner").run();
  } finally {
    db.close();
    if (owner) ownedHere.delete(path);
  }
  if (!owner || !clean) return;
  const fd = fs.openSync(path, constants.O_RDONLY);
  try {
    fsyncOrFail(fs, fd, path);
  } finally {
    fs.closeSync(fd);
  }
  const stat = fs.statSync(path);
  const record: CloseRecord = { version: VERSION, size: stat.size, mtimeMs: stat.mtimeMs };
  // Not fsync'd itself: a record a power cut loses (or leaves unreadable) only costs a rebuild.
  writeFileAtomic(join(path, "..", SEARCH_RECORD), JSON.stringify(record), false, fs);
}

/** The close record, removed: it vouches for the index only until the next owner writes to it. */
function takeRecord(fs: FileSystem, path: string): CloseRecord | undefined {
  let text: string;
  try {
    text = fs.readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
  fs.rmSync(path, { force: true });
  try {
    const value = JSON.parse(text) as Partial<CloseRecord>;
    if (typeof value.size === "number" && typeof value.mtimeMs === "number" && value.version === VERSION)
      return value as CloseRecord;
  } catch {
    // An unreadable record vouches for nothing.
  }
  return undefined;
}

function statOf(fs: FileSystem, path: string): { size: number; mtimeMs: number } | undefined {
  try {
    const stat = fs.statSync(path);
    return { size: stat.size, mtimeMs: stat.mtimeMs };
  } catch {
    return undefined;
  }
}
