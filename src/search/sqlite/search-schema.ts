/**
 * The search tables' first version: migration 5 of the SQLite store creates them, as written here, never
 * changed (a later version is a new constant and a migration of its own).
 */
export const SEARCH_SCHEMA_V1 = `
CREATE TABLE search_rows (
  row INTEGER PRIMARY KEY,
  sid INTEGER NOT NULL,
  seq INTEGER NOT NULL,
  role TEXT NOT NULL,
  ts INTEGER NOT NULL,
  body TEXT NOT NULL
);
CREATE TABLE search_sids (sid INTEGER NOT NULL, row INTEGER NOT NULL, PRIMARY KEY (sid, row)) WITHOUT ROWID;
CREATE VIRTUAL TABLE search_words USING fts5(body, tokenize = 'unicode61 remove_diacritics 2',
  content = 'search_rows', content_rowid = 'row', columnsize = 0);
CREATE VIRTUAL TABLE search_grams USING fts5(body, tokenize = 'trigram remove_diacritics 1', content = '',
  contentless_delete = 1);
CREATE TABLE search_terms (term TEXT PRIMARY KEY) WITHOUT ROWID;
CREATE TABLE search_state (
  one INTEGER PRIMARY KEY CHECK (one = 1),
  backfill_after INTEGER,
  indexed_upto INTEGER NOT NULL DEFAULT 0
);
INSERT INTO search_words (search_words, rank) VALUES ('automerge', 16);
INSERT INTO search_words (search_words, rank) VALUES ('crisismerge', 64);
`;

/** The search tables as a new database gets them (the JSONL store's sidecar index is such a database too). */
export const SEARCH_SCHEMA = SEARCH_SCHEMA_V1;
