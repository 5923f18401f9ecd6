import type Database from "better-sqlite3";
import { SessiondError } from "../../model/errors.js";
import { SEARCH_SCHEMA_V1 } from "../../search/sqlite/search-schema.js";

export const SCHEMA_VERSION = 7;

/** The message of the triggers that refuse an entry stored twice (see SCHEMA_V2). */
export const DUPLICATE_ENTRY = "sessiond: an entry with this seq or idempotency key is already stored";

/**
 * Sessions get an integer `sid` so that entries, keyed (sid, seq) WITHOUT ROWID, stay small and a
 * session's entries sit together on disk.
 *
 * New entries land in `journal`, a small table in arrival order: a commit of appends from a hundred
 * sessions then dirties a few pages instead of one per session. The writer folds the journal into
 * `entries` in bulk (every few thousand rows, when idle, and on close). Readers read both.
 */
/** The columns of an entry, the same in `entries` and in the `journal` that feeds it. */
const ENTRY_COLUMNS = `sid INTEGER NOT NULL,
  seq INTEGER NOT NULL,
  id TEXT NOT NULL,
  ts INTEGER NOT NULL,
  type TEXT NOT NULL,
  idem_key TEXT,
  data TEXT NOT NULL`;

const SCHEMA_V1 = `
CREATE TABLE sessions (
  sid INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  key TEXT NOT NULL,
  generation INTEGER NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('active', 'archived')),
  agent TEXT NOT NULL,
  channel TEXT NOT NULL,
  chat_type TEXT,
  created_by TEXT NOT NULL,
  title TEXT NOT NULL DEFAULT '',
  created_at INTEGER NOT NULL,
  last_activity_at INTEGER NOT NULL,
  archived_at INTEGER,
  entry_count INTEGER NOT NULL DEFAULT 0,
  message_count INTEGER NOT NULL DEFAULT 0,
  approx_tokens INTEGER NOT NULL DEFAULT 0,
  context_from_seq INTEGER NOT NULL DEFAULT 1,
  last_compaction_seq INTEGER,
  overrides TEXT NOT NULL DEFAULT '{}'
);
CREATE UNIQUE INDEX sessions_current ON sessions (key) WHERE state = 'active';
CREATE UNIQUE INDEX sessions_generations ON sessions (key, generation);
CREATE INDEX sessions_activity ON sessions (last_activity_at, id) WHERE state = 'active';
CREATE INDEX sessions_archived ON sessions (archived_at, id) WHERE state = 'archived';
CREATE INDEX sessions_agent ON sessions (agent, id);
CREATE INDEX sessions_channel ON sessions (channel, id);
CREATE TABLE entries (
  ${ENTRY_COLUMNS},
  PRIMARY KEY (sid, seq)
) WITHOUT ROWID;
CREATE UNIQUE INDEX entries_idempotency ON entries (sid, idem_key) WHERE idem_key IS NOT NULL;
CREATE TABLE journal (
  ${ENTRY_COLUMNS}
);
CREATE UNIQUE INDEX journal_seq ON journal (sid, seq);
CREATE UNIQUE INDEX journal_idempotency ON journal (sid, idem_key) WHERE idem_key IS NOT NULL;
`;

/**
 * v2: an entry's (sid, seq) and idempotency key are unique across `entries` and `journal` together, not
 * only within each. A fold copies a journal row into `entries` under its own id, so that is no duplicate.
 */
const SCHEMA_V2 = `
CREATE TRIGGER journal_unique_across BEFORE INSERT ON journal
WHEN EXISTS (SELECT 1 FROM entries WHERE sid = NEW.sid AND seq = NEW.seq)
  OR (NEW.idem_key IS NOT NULL AND EXISTS (SELECT 1 FROM entries WHERE sid = NEW.sid AND idem_key = NEW.idem_key))
BEGIN SELECT RAISE(ABORT, '${DUPLICATE_ENTRY}'); END;
CREATE TRIGGER entries_unique_across BEFORE INSERT ON entries
WHEN EXISTS (SELECT 1 FROM journal WHERE sid = NEW.sid AND seq = NEW.seq AND id != NEW.id)
  OR (NEW.idem_key IS NOT NULL
    AND EXISTS (SELECT 1 FROM journal WHERE sid = NEW.sid AND idem_key = NEW.idem_key AND id != NEW.id))
BEGIN SELECT RAISE(ABORT, '${DUPLICATE_ENTRY}'); END;
`;

/**
 * Search (search-index.ts), schema v5. `search_rows` holds each indexed message: where it is and its text,
 * stored once. `search_words` (FTS5, unicode61 without diacritics) is an external-content index over it,
 * without per-row lengths (ranking is done in this process); `search_grams` (trigram, contentless) finds
 * CJK. An append writes only its `search_rows` row (in arrival order: one page or two per commit); its words
 * go into `search_terms`, and it into the FTS indexes and `search_sids` (a session's indexed rows; an index on `search_rows`
 * would dirty a page per session per commit) take the rows above `search_state.indexed_upto` in bulk when
 * the journal folds, and a search scans those rows itself, so it never misses an acknowledged message. `search_terms` holds the indexed words, so that the last word
 * typed (a prefix) is looked up as the words it begins instead of FTS5 merging every matching word's list.
 * A database upgraded from before v5 has its messages indexed in the background, from
 * `search_state.backfill_after` (a sid) on; NULL when every session is indexed.
 *
 * v3 and v4 wrote both FTS tables in every append's transaction, the text stored in `search_words` too:
 * durable appends with the index were 0.52-0.76x of those without. Their index tables are dropped and
 * built again from the entries, in the background.
 */
const DROP_SEARCH_V4 = `
DROP TABLE IF EXISTS search_words;
DROP TABLE IF EXISTS search_grams;
DROP TABLE IF EXISTS search_rows;
DROP TABLE IF EXISTS search_terms;
DROP TABLE IF EXISTS search_state;
DROP TABLE IF EXISTS search_sids;
`;
const SCHEMA_V5 = SEARCH_SCHEMA_V1;

/**
 * v6: a fork (or a rewound generation) names the session whose first `fork_seq` entries it reads through.
 * Columns already there (a file whose version was set back by hand) are kept.
 */
function addForkColumns(db: Database.Database): void {
  const columns = new Set((db.pragma("table_info(sessions)") as Array<{ name: string }>).map((c) => c.name));
  for (const [name, type] of [
    ["fork_of", "TEXT"],
    ["fork_key", "TEXT"],
    ["fork_seq", "INTEGER"],
  ] as const)
    if (!columns.has(name)) db.exec(`ALTER TABLE sessions ADD COLUMN ${name} ${type}`);
  db.exec("CREATE INDEX IF NOT EXISTS sessions_forks ON sessions (fork_of)");
}

/**
 * v7: a session's data key, wrapped by the configured key, when the store is encrypted (src/store/encryption/):
 * deleting the row destroys it. NULL for a session stored in clear.
 */
function addDataKeyColumn(db: Database.Database): void {
  const columns = new Set((db.pragma("table_info(sessions)") as Array<{ name: string }>).map((c) => c.name));
  if (!columns.has("data_key")) db.exec("ALTER TABLE sessions ADD COLUMN data_key TEXT");
}

export function migrate(db: Database.Database): void {
  const version = db.pragma("user_version", { simple: true }) as number;
  if (version === SCHEMA_VERSION) return;
  if (version > SCHEMA_VERSION) {
    // Not STORE_UNAVAILABLE: serve would fall back to the memory store, and a user who downgraded would
    // run on an empty one. Refused, untouched, with the way out.
    throw new SessiondError(
      "STORE_SCHEMA_NEWER",
      `${db.name}: the database's schema is version ${version}, newer than this sessiond knows (${SCHEMA_VERSION}): upgrade sessiond, or restore the backup taken before the upgrade`,
      { details: { schema: version, known: SCHEMA_VERSION } },
    );
  }
  db.transaction(() => {
    // Another process may have migrated while this one waited for the write lock.
    const now = db.pragma("user_version", { simple: true }) as number;
    if (now === SCHEMA_VERSION) return;
    if (now < 1) db.exec(SCHEMA_V1);
    if (now < 2) db.exec(SCHEMA_V2);
    if (now < 5) {
      db.exec(DROP_SEARCH_V4);
      db.exec(SCHEMA_V5);
      // A new database has nothing to index; an upgraded one indexes what it holds from the first sid on.
      db.prepare("INSERT INTO search_state (one, backfill_after) VALUES (1, ?)").run(now < 1 ? null : 0);
    }
    if (now < 6) addForkColumns(db);
    if (now < 7) addDataKeyColumn(db);
    db.pragma(`user_version = ${SCHEMA_VERSION}`);
  }).immediate();
}
