import type Database from "better-sqlite3";
import { foldedWords } from "../../search/rank.js";
import type { ErasedSender } from "../scrub.js";

/** What a scrub of a SQLite file did (erasure by subject, src/lifecycle/subject-erasure.ts). */
export interface ScrubCounts {
  /** Inbox rows of the erased keys deleted (their envelopes hold the person's text). */
  inboxRows: number;
  /** Words dropped from `search_terms` because no remaining message holds them. */
  searchTerms: number;
  /** The database file's size after the rewrite, bytes. */
  fileBytes: number;
}

/**
 * Leaves no byte of deleted text in the file: the keys' inbox rows go, `search_terms` is rebuilt from the
 * rows that remain (it is a vocabulary, so an erased person's unique words would stay in it), both FTS5
 * indexes are merged into one segment each (`optimize`: a deleted row's tokens stay in old segments until
 * a merge), then `VACUUM` writes every live page into a fresh file (no free page, no freed cell space
 * keeps old bytes) and `wal_checkpoint(TRUNCATE)` copies it back and empties the WAL. Runs on the
 * writer's connection; O(size of the database). Call it after the search rows are indexed.
 */
export function scrubDatabase(
  db: Database.Database,
  keys: readonly string[],
  senders: readonly ErasedSender[] = [],
): ScrubCounts {
  let inboxRows = 0;
  let searchTerms = 0;
  db.transaction(() => {
    const deleteInbox = db.prepare("DELETE FROM inbox WHERE key = ?");
    for (const key of keys) inboxRows += deleteInbox.run(key).changes;
    const deleteFrom = db.prepare(`DELETE FROM inbox WHERE lower(json_extract(envelope, '$.sender.id')) = @id
      AND (@channel = '*' OR lower(json_extract(envelope, '$.channel')) = @channel)`);
    for (const s of senders) inboxRows += deleteFrom.run({ id: s.senderId, channel: s.channel }).changes;
    searchTerms = scrubSearchTables(db);
  })();
  return { inboxRows, searchTerms, fileBytes: rewriteFile(db) };
}

/**
 * Inside a transaction: `search_terms` rebuilt from the rows that remain, both FTS5 indexes merged into
 * one segment. How many words went. (The JSONL store's search.db holds the same tables.)
 */
export function scrubSearchTables(db: Database.Database): number {
  const before = db.prepare("SELECT count(*) FROM search_terms").pluck().get() as number;
  db.exec("DELETE FROM search_terms");
  const insert = db.prepare("INSERT OR IGNORE INTO search_terms (term) VALUES (?)");
  const page = db.prepare("SELECT row, body FROM search_rows WHERE row > ? ORDER BY row LIMIT 500");
  for (let after = 0; ; ) {
    const rows = page.all(after) as Array<{ row: number; body: string }>;
    if (rows.length === 0) break;
    for (const { body } of rows) for (const word of foldedWords(body)) insert.run(word);
    after = rows[rows.length - 1]?.row ?? after;
  }
  const after = db.prepare("SELECT count(*) FROM search_terms").pluck().get() as number;
  db.exec("INSERT INTO search_words (search_words) VALUES ('optimize')");
  db.exec("INSERT INTO search_grams (search_grams) VALUES ('optimize')");
  return Math.max(0, before - after);
}

/** VACUUM (a fresh copy of the live pages), then the WAL copied back and emptied; the file's bytes. */
export function rewriteFile(db: Database.Database): number {
  // VACUUM builds its copy in a temporary database: in a file (in the OS temp dir, holding only live data,
  // removed after), not in memory, which would take as much memory as the database is large.
  const tempStore = db.pragma("temp_store", { simple: true }) as number;
  db.pragma("temp_store = FILE");
  try {
    db.exec("VACUUM");
  } finally {
    db.pragma(`temp_store = ${tempStore}`);
  }
  db.pragma("wal_checkpoint(TRUNCATE)");
  const pages = db.pragma("page_count", { simple: true }) as number;
  const size = db.pragma("page_size", { simple: true }) as number;
  return pages * size;
}
