import type Database from "better-sqlite3";
import { makeDirSync } from "../../fs/make-dir.js";
import { SessiondError } from "../../model/errors.js";
import { sqliteDatabase } from "../../store/sqlite/better-sqlite3.js";
import { SEEN_PRUNE_EVERY_MS, SEEN_RETENTION_MS, type SeenMessages } from "./seen.js";

export const SEEN_FILE = "channel-seen.db";

/** Seen message ids in their own SQLite file (WAL) in the data directory, beside the store. */
export class SqliteSeenMessages implements SeenMessages {
  private readonly db: Database.Database;
  private readonly insert: Database.Statement<[string, number]>;
  private readonly remove: Database.Statement<[string]>;
  private readonly expire: Database.Statement<[number]>;
  private prunedAt = 0;

  constructor(dir: string, path: string) {
    try {
      makeDirSync(dir);
      this.db = new (sqliteDatabase())(path);
      this.db.pragma("journal_mode = WAL");
      // A claim must survive a crash: the redelivery that follows a crash is exactly what it is for.
      this.db.pragma("synchronous = FULL");
      this.db.pragma("busy_timeout = 5000");
      this.db.exec(
        "CREATE TABLE IF NOT EXISTS seen (id TEXT PRIMARY KEY, at INTEGER NOT NULL) WITHOUT ROWID",
      );
      this.db.exec("CREATE INDEX IF NOT EXISTS seen_at ON seen (at)");
    } catch (error) {
      throw new SessiondError(
        "STORE_UNAVAILABLE",
        `the channels' seen-messages file failed (${path}): ${String(error)}`,
        {
          cause: error,
        },
      );
    }
    this.insert = this.db.prepare("INSERT OR IGNORE INTO seen (id, at) VALUES (?, ?)");
    this.remove = this.db.prepare("DELETE FROM seen WHERE id = ?");
    this.expire = this.db.prepare("DELETE FROM seen WHERE at < ?");
  }

  async claim(id: string, at: number): Promise<boolean> {
    if (at - this.prunedAt > SEEN_PRUNE_EVERY_MS) {
      this.expire.run(at - SEEN_RETENTION_MS);
      this.prunedAt = at;
    }
    return this.insert.run(id, at).changes === 1;
  }

  async forget(id: string): Promise<void> {
    this.remove.run(id);
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
