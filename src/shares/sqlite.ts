import { existsSync } from "node:fs";
import { dirname } from "node:path";
import type Database from "better-sqlite3";
import { makeDirSync } from "../fs/make-dir.js";
import { SessiondError } from "../model/errors.js";
import { sqliteDatabase } from "../store/sqlite/better-sqlite3.js";
import { linkOf, rowValues, SHARE_COLUMNS, type ShareRow } from "./rows.js";
import type { ShareLink } from "./share.js";
import type { ShareStore } from "./store.js";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS shares (
  id TEXT PRIMARY KEY, key TEXT NOT NULL, session_id TEXT NOT NULL, head_seq INTEGER NOT NULL,
  title TEXT NOT NULL, created_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS shares_key ON shares (key, created_at);
`;

/**
 * Share links in their own SQLite file beside the store (WAL): every process on the data directory (the
 * gateway, a CLI command) reads the file on each call, so a revocation holds at once. The file is made by
 * the first link; until then every read finds none.
 */
export class SqliteShareStore implements ShareStore {
  private db: Database.Database | undefined;

  constructor(readonly path: string) {}

  private open(create: boolean): Database.Database | undefined {
    if (this.db) return this.db;
    if (!create && !existsSync(this.path)) return undefined;
    try {
      makeDirSync(dirname(this.path));
      const db = new (sqliteDatabase())(this.path);
      db.pragma("journal_mode = WAL");
      db.pragma("synchronous = FULL");
      db.pragma("busy_timeout = 5000");
      // A deleted link's title leaves no bytes in the file's free space (erasure by subject).
      db.pragma("secure_delete = ON");
      db.exec(SCHEMA);
      this.db = db;
      return db;
    } catch (error) {
      throw new SessiondError(
        "STORE_UNAVAILABLE",
        `the share links database failed (${this.path}): ${error}`,
        {
          cause: error,
        },
      );
    }
  }

  async insert(link: ShareLink) {
    this.open(true)!
      .prepare(`INSERT INTO shares (${SHARE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)`)
      .run(...rowValues(link));
  }

  async get(id: string) {
    const row = this.open(false)
      ?.prepare<[string], ShareRow>(`SELECT ${SHARE_COLUMNS} FROM shares WHERE id = ?`)
      .get(id);
    return row && linkOf(row);
  }

  async forKey(key: string) {
    const rows =
      this.open(false)
        ?.prepare<[string], ShareRow>(
          `SELECT ${SHARE_COLUMNS} FROM shares WHERE key = ? ORDER BY created_at, id`,
        )
        .all(key) ?? [];
    return rows.map(linkOf);
  }

  async delete(id: string) {
    const db = this.open(false);
    return db ? db.prepare("DELETE FROM shares WHERE id = ?").run(id).changes > 0 : false;
  }

  async deleteKey(key: string) {
    const db = this.open(false);
    if (!db) return;
    db.prepare("DELETE FROM shares WHERE key = ?").run(key);
    // Older WAL frames still hold the title: copied back and emptied (erasure by subject).
    db.pragma("wal_checkpoint(TRUNCATE)");
  }

  async close() {
    if (this.db?.open) this.db.close();
    this.db = undefined;
  }
}
