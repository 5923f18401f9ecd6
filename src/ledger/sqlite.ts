import type Database from "better-sqlite3";
import { sqliteDatabase } from "../store/sqlite/better-sqlite3.js";
import {
  type CostLedger,
  forgottenKey,
  type LedgerEntry,
  type LedgerGroup,
  type LedgerTotal,
} from "./entry.js";
import { GROUP_SQL, insertSql, insertValues, sortedTotals, type TotalRow, totalsSql } from "./sql.js";

const INSERT = insertSql(() => "?");

const SCHEMA = `CREATE TABLE IF NOT EXISTS cost_ledger (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  at TEXT NOT NULL, agent TEXT NOT NULL, session_id TEXT NOT NULL, key TEXT NOT NULL,
  model TEXT NOT NULL, kind TEXT NOT NULL,
  input_tokens INTEGER, output_tokens INTEGER, cache_read_tokens INTEGER, cache_write_tokens INTEGER,
  reported_usd REAL, usd REAL, source TEXT
);
CREATE INDEX IF NOT EXISTS cost_ledger_key ON cost_ledger(key);`;

/**
 * The ledger in its own SQLite table, apart from the session log: deleting, resetting or erasing a session's
 * history never touches it, and it holds no text to erase.
 */
export class SqliteCostLedger implements CostLedger {
  private readonly db: Database.Database;

  constructor(path: string) {
    const Sqlite = sqliteDatabase();
    this.db = new Sqlite(path);
    this.db.pragma("journal_mode = WAL");
    // As the runtime sessions' cost records: a commit survives a process crash, a power cut may lose the last
    // few; no fsync on a turn's path for each model call.
    this.db.pragma("synchronous = NORMAL");
    // A forgotten key's bytes are zeroed in the freed cells, not left for a file scan to find.
    this.db.pragma("secure_delete = ON");
    this.db.exec(SCHEMA);
  }

  async record(e: LedgerEntry): Promise<void> {
    this.db.prepare(INSERT).run(...insertValues(e));
  }

  /** Summed by SQLite, so a long ledger is never read into memory row by row. */
  async totals(by: LedgerGroup, filter: { since?: string } = {}): Promise<LedgerTotal[]> {
    const rows = this.db.prepare(totalsSql(GROUP_SQL[by], "?")).all(filter.since ?? "") as TotalRow[];
    return sortedTotals(rows);
  }

  async forgetKey(key: string, secret: string): Promise<number> {
    const { changes } = this.db
      .prepare("UPDATE cost_ledger SET key = ? WHERE key = ?")
      .run(forgottenKey(secret, key), key);
    // The pages that held the key are in the WAL until a checkpoint: moved into the file and the WAL cut.
    if (changes > 0) this.db.pragma("wal_checkpoint(TRUNCATE)");
    return changes;
  }

  async close(): Promise<void> {
    this.db.close();
  }
}
