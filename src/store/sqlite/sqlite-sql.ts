import { dirname } from "node:path";
import type Database from "better-sqlite3";
import { makeDirSync } from "../../fs/make-dir.js";
import { SessiondError } from "../../model/errors.js";
import { messageOf } from "../group-commit.js";
import { isDamagedError, sqliteCode } from "../sql/sqlite-statements.js";
import type { Durability } from "../store.js";
import { sqliteDatabase } from "./better-sqlite3.js";
import { migrate } from "./schema.js";

const ENTRY_COLUMNS = "seq, id, ts, idem_key, data";
/** The same SELECT over folded entries and the journal not yet folded. */
const bothTables = (where: string) =>
  `SELECT ${ENTRY_COLUMNS} FROM entries WHERE ${where} UNION ALL SELECT ${ENTRY_COLUMNS} FROM journal WHERE ${where}`;

export const SQL = {
  current: "SELECT * FROM sessions WHERE key = ? AND state = 'active'",
  byId: "SELECT * FROM sessions WHERE id = ?",
  generations: "SELECT * FROM sessions WHERE key = ? ORDER BY generation DESC",
  lastGeneration: "SELECT max(generation) AS g FROM sessions WHERE key = ?",
  insertSession: `INSERT INTO sessions (id, key, generation, state, agent, channel, chat_type, created_by, title,
    created_at, last_activity_at, entry_count, message_count, approx_tokens, context_from_seq, last_compaction_seq,
    overrides, fork_of, fork_key, fork_seq, data_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  forksOf: "SELECT * FROM sessions WHERE fork_of IN (SELECT value FROM json_each(?))",
  updateSession: `UPDATE sessions SET state = ?, title = ?, created_at = ?, last_activity_at = ?, archived_at = ?,
    entry_count = ?, message_count = ?, approx_tokens = ?, context_from_seq = ?, last_compaction_seq = ?, overrides = ?
    WHERE sid = ?`,
  // What an append changes, and only that: an UPDATE naming `state` would also rewrite the entry of the
  // partial index on (key) WHERE state = 'active', a page write per append for nothing.
  updateAfterAppend: `UPDATE sessions SET title = ?, created_at = ?, last_activity_at = ?, entry_count = ?,
    message_count = ?, approx_tokens = ?, context_from_seq = ?, last_compaction_seq = ? WHERE sid = ?`,
  idempotent: bothTables("sid = @sid AND idem_key = @key"),
  insertEntry: "INSERT INTO entries (sid, seq, id, ts, type, idem_key, data) VALUES (?, ?, ?, ?, ?, ?, ?)",
  insertJournal: "INSERT INTO journal (sid, seq, id, ts, type, idem_key, data) VALUES (?, ?, ?, ?, ?, ?, ?)",
  entryAt: bothTables("sid = @sid AND seq = @seq"),
  kept: `${bothTables("sid = @sid AND seq >= @from AND type != 'compaction'")} ORDER BY seq`,
  rangeAsc: `${bothTables("sid = @sid AND seq > @after AND seq < @before")} ORDER BY seq ASC LIMIT @limit`,
  rangeDesc: `${bothTables("sid = @sid AND seq > @after AND seq < @before")} ORDER BY seq DESC LIMIT @limit`,
  countEntries:
    "SELECT (SELECT count(*) FROM entries WHERE sid = @sid) + (SELECT count(*) FROM journal WHERE sid = @sid) AS n",
  deleteEntries: "DELETE FROM entries WHERE sid = ?",
  deleteJournal: "DELETE FROM journal WHERE sid = ?",
  deleteEntryAt: "DELETE FROM entries WHERE sid = ? AND seq = ?",
  deleteJournalAt: "DELETE FROM journal WHERE sid = ? AND seq = ?",
  deleteSession: "DELETE FROM sessions WHERE sid = ?",
  renumber: "UPDATE sessions SET key = ?, generation = ? WHERE sid = ?",
  sidOf: "SELECT sid FROM sessions WHERE id = ?",
  sealedSample: "SELECT * FROM sessions WHERE data_key IS NOT NULL LIMIT 1",
  journalSize: "SELECT count(*) AS n, max(rowid) AS last FROM journal",
  foldInto: `INSERT INTO entries (sid, seq, id, ts, type, idem_key, data)
    SELECT sid, seq, id, ts, type, idem_key, data FROM journal WHERE rowid <= ? ORDER BY sid, seq`,
  foldDelete: "DELETE FROM journal WHERE rowid <= ?",
  dataVersion: "PRAGMA data_version",
  duplicated: `SELECT s.id, j.seq, j.idem_key FROM journal j JOIN sessions s ON s.sid = j.sid
    WHERE EXISTS (SELECT 1 FROM entries e WHERE e.sid = j.sid AND (e.seq = j.seq OR e.idem_key = j.idem_key))
    LIMIT 1`,
} as const;

export function openDatabase(
  path: string,
  durability: Durability,
  { busyTimeoutMs, pageCacheKb }: { busyTimeoutMs: number; pageCacheKb: number },
): Database.Database {
  try {
    if (path !== ":memory:") makeDirSync(dirname(path));
    const db = new (sqliteDatabase())(path);
    db.pragma("journal_mode = WAL");
    // Savepoints (one per write in a batch) spill to temporary files otherwise.
    db.pragma("temp_store = MEMORY");
    db.pragma(`synchronous = ${durability === "strict" ? "FULL" : "NORMAL"}`);
    db.pragma(`busy_timeout = ${Math.max(0, Math.floor(busyTimeoutMs))}`);
    // Negative: a size in KiB rather than in pages.
    db.pragma(`cache_size = ${-Math.max(64, Math.floor(pageCacheKb))}`);
    migrate(db);
    return db;
  } catch (error) {
    throw asStoreError(error, path);
  }
}

export function walSyncFailed(path: string, error: unknown): SessiondError {
  return new SessiondError("STORE_FAILED", `the fsync of ${path}-wal failed: ${messageOf(error)}`, {
    cause: error,
  });
}

export function isIoError(error: unknown): boolean {
  return sqliteCode(error).startsWith("SQLITE_IOERR");
}

export function isFsyncError(error: unknown): boolean {
  return sqliteCode(error) === "SQLITE_IOERR_FSYNC" || sqliteCode(error) === "SQLITE_IOERR_DIR_FSYNC";
}

export function isConstraintError(error: unknown): boolean {
  return sqliteCode(error).startsWith("SQLITE_CONSTRAINT");
}

export function asStoreError(error: unknown, path?: string): SessiondError {
  if (error instanceof SessiondError) return error;
  const where = path ? ` (${path})` : "";
  if (isDamagedError(error)) {
    return new SessiondError("STORE_CORRUPT", `the database file is damaged or not a database${where}`, {
      cause: error,
    });
  }
  return new SessiondError("STORE_UNAVAILABLE", `the database failed${where}: ${messageOf(error)}`, {
    cause: error,
  });
}
