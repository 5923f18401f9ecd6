/**
 * The PostgreSQL schema as numbered migrations, applied in order at start (`migrate.ts`); the versions
 * applied are rows of `sessiond_schema`. A migration is never edited once released: add the next one.
 *
 * Keys and ids are `COLLATE "C"`: byte order, so a key prefix is a range and pages are ordered as on
 * SQLite whatever the database's locale. Times are milliseconds since the epoch (bigint), as in every
 * store; lease expiry alone is the server's clock (`timestamptz`), so processes with skewed clocks agree.
 */
export const MIGRATIONS: readonly string[] = [
  `
CREATE TABLE sessions (
  sid bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id text COLLATE "C" NOT NULL UNIQUE,
  key text COLLATE "C" NOT NULL,
  generation integer NOT NULL,
  state text NOT NULL CHECK (state IN ('active', 'archived')),
  agent text NOT NULL,
  channel text NOT NULL,
  chat_type text,
  created_by text NOT NULL,
  title text NOT NULL DEFAULT '',
  created_at bigint NOT NULL,
  last_activity_at bigint NOT NULL,
  archived_at bigint,
  entry_count integer NOT NULL DEFAULT 0,
  message_count integer NOT NULL DEFAULT 0,
  approx_tokens bigint NOT NULL DEFAULT 0,
  context_from_seq integer NOT NULL DEFAULT 1,
  last_compaction_seq integer,
  overrides jsonb NOT NULL DEFAULT '{}'
);
CREATE UNIQUE INDEX sessions_current ON sessions (key) WHERE state = 'active';
CREATE UNIQUE INDEX sessions_generations ON sessions (key, generation);
CREATE INDEX sessions_activity ON sessions (last_activity_at, id) WHERE state = 'active';
CREATE INDEX sessions_archived ON sessions (archived_at, id) WHERE state = 'archived';
CREATE INDEX sessions_agent ON sessions (agent, id);
CREATE INDEX sessions_channel ON sessions (channel, id);

CREATE TABLE entries (
  sid bigint NOT NULL,
  seq integer NOT NULL,
  id text COLLATE "C" NOT NULL,
  ts bigint NOT NULL,
  type text NOT NULL,
  idem_key text,
  data text NOT NULL,
  PRIMARY KEY (sid, seq),
  UNIQUE (sid, idem_key)
);

-- One turn per key across processes: the holder, and an epoch that every take increments (fencing).
CREATE TABLE leases (
  key text COLLATE "C" PRIMARY KEY,
  holder text,
  epoch bigint NOT NULL DEFAULT 0,
  expires_at timestamptz
);

-- Admitted turn inputs (src/model/inbox.ts), written before they are acknowledged as queued; \`n\` is
-- the order of admission across processes. \`json\`, not jsonb: envelopes read back as they were written.
CREATE TABLE inbox (
  n bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
  id text COLLATE "C" PRIMARY KEY,
  key text COLLATE "C" NOT NULL,
  envelope json NOT NULL,
  dedupe_key text UNIQUE,
  state text NOT NULL
    CHECK (state IN ('pending', 'running', 'done', 'failed', 'interrupted', 'cancelled', 'dropped')),
  admitted_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  outcome json
);
CREATE INDEX inbox_unfinished ON inbox (n) WHERE state IN ('pending', 'running');
CREATE INDEX inbox_finished ON inbox (updated_at) WHERE state NOT IN ('pending', 'running');

-- What src/runtimes/sessions keeps beside the store (the SQLite runtime-sessions file's tables).
CREATE TABLE runtime_sessions (
  agent text NOT NULL, key text COLLATE "C" NOT NULL, runtime text NOT NULL, id text NOT NULL, data jsonb,
  saved_at bigint NOT NULL, PRIMARY KEY (agent, key)
);
CREATE INDEX runtime_sessions_key ON runtime_sessions (key);
CREATE TABLE runtime_cost_baselines (
  agent text NOT NULL, key text COLLATE "C" NOT NULL, baseline jsonb NOT NULL, PRIMARY KEY (agent, key)
);
CREATE TABLE runtime_run_costs (
  agent text NOT NULL, key text COLLATE "C" NOT NULL, run_id text NOT NULL, runtime text NOT NULL,
  status text NOT NULL, usd double precision, at bigint NOT NULL, PRIMARY KEY (agent, key, run_id)
);
CREATE INDEX runtime_run_costs_key ON runtime_run_costs (key);
CREATE TABLE runtime_attention (
  agent text NOT NULL, key text COLLATE "C" NOT NULL, error text NOT NULL, at bigint NOT NULL,
  PRIMARY KEY (agent, key)
);
CREATE TABLE runtime_agents (agent text PRIMARY KEY, cwd text);
`,
  // 2: a batch of appends commits as one statement, aborted by this unless it wrote what it planned; an
  // entry without an idempotency key (most of them) no longer takes an entry in a unique index; and the
  // activity index holds the minute of the last activity (ACTIVITY_BUCKET), not the time, so that an
  // append's update of its session touches no index (HOT, with room left on the page for it).
  `
CREATE FUNCTION sessiond_expect(ok boolean) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
  IF NOT ok THEN
    RAISE EXCEPTION 'the batch no longer matches the database' USING ERRCODE = '40001';
  END IF;
  RETURN true;
END $$;
ALTER TABLE entries DROP CONSTRAINT entries_sid_idem_key_key;
CREATE UNIQUE INDEX entries_idempotent ON entries (sid, idem_key) WHERE idem_key IS NOT NULL;
ALTER TABLE sessions SET (fillfactor = 70);
ALTER TABLE sessions ADD COLUMN activity_bucket bigint GENERATED ALWAYS AS (last_activity_at / 60000) STORED;
DROP INDEX sessions_activity;
CREATE INDEX sessions_activity ON sessions (activity_bucket) WHERE state = 'active';
`,
  // 3: search (search.ts). What is indexed of an entry is sessiond_search_text (search/indexed-text.ts in
  // SQL); the words are a stored generated column, so the row an append commits is indexed with it. The
  // words fold as `simple` plus `unaccent` where that extension can be created, else as `simple` alone
  // (accents then matter); `pg_trgm`, where it can be created, indexes the text that has CJK, for substrings.
  // `n` orders entries across sessions, newest last: search ranks a window of the newest matches.
  `
DO $$ BEGIN
  BEGIN CREATE EXTENSION IF NOT EXISTS unaccent; EXCEPTION WHEN OTHERS THEN NULL; END;
  BEGIN CREATE EXTENSION IF NOT EXISTS pg_trgm; EXCEPTION WHEN OTHERS THEN NULL; END;
END $$;
CREATE TEXT SEARCH CONFIGURATION sessiond_search (COPY = simple);
DO $$ BEGIN
  IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'unaccent') THEN
    ALTER TEXT SEARCH CONFIGURATION sessiond_search ALTER MAPPING FOR asciiword, asciihword, hword_asciipart,
      word, hword, hword_part, numword, numhword, hword_numpart WITH unaccent, simple;
  END IF;
END $$;
CREATE FUNCTION sessiond_search_text(type text, data text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN type = 'message' THEN (
    SELECT j->>'content' FROM (SELECT data::jsonb AS j) d
    WHERE j->>'role' IN ('user', 'assistant') AND coalesce(j->>'autoInjected', 'false') <> 'true'
      AND j->>'content' ~ '[^[:space:]]')
  END
$$;
-- The indexed text when it has Han, kana or Hangul (CJK in search/indexed-text.ts): only CJK terms read the
-- trigram index, and they match only such text.
CREATE FUNCTION sessiond_search_cjk(type text, data text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT t FROM (SELECT sessiond_search_text(type, data) AS t) x
  WHERE t ~ '[\\u1100-\\u11ff\\u2e80-\\u2fdf\\u3005\\u3007\\u3021-\\u3029\\u3038-\\u303b\\u3041-\\u309f\\u30a1-\\u30ff\\u3131-\\u318f\\u31f0-\\u31ff\\u3400-\\u4dbf\\u4e00-\\u9fff\\ua960-\\ua97f\\uac00-\\ud7ff\\uf900-\\ufaff\\uff66-\\uffdc\\U00020000-\\U0003134f]'
$$;
ALTER TABLE entries
  ADD COLUMN n bigint GENERATED ALWAYS AS IDENTITY,
  ADD COLUMN search_words tsvector
    GENERATED ALWAYS AS (to_tsvector('sessiond_search'::regconfig, sessiond_search_text(type, data))) STORED;
CREATE INDEX entries_n ON entries (n);
CREATE INDEX entries_search_words ON entries USING gin (search_words);
DO $$ BEGIN
  IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') THEN
    CREATE INDEX entries_search_grams ON entries USING gin (sessiond_search_cjk(type, data) gin_trgm_ops);
  END IF;
END $$;
`,
  // 4: an entry's search columns come with its row (search-words.ts computes them), so the server no
  // longer parses the JSON and folds the words of every append: the words column keeps what migration 3
  // computed for the rows already stored, the CJK text becomes a column of its own, and the trigram index
  // holds only the entries that have some.
  `
ALTER TABLE entries ALTER COLUMN search_words DROP EXPRESSION;
ALTER TABLE entries ADD COLUMN search_cjk text;
UPDATE entries SET search_cjk = sessiond_search_cjk(type, data)
  WHERE type = 'message' AND sessiond_search_cjk(type, data) IS NOT NULL;
DROP INDEX IF EXISTS entries_search_grams;
DO $$ BEGIN
  IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') THEN
    CREATE INDEX entries_search_grams ON entries USING gin (search_cjk gin_trgm_ops) WHERE search_cjk IS NOT NULL;
  END IF;
END $$;
`,
  // 5: gateways sharing the database. Every unfinished inbox item has an owner (the process that admitted
  // it or took it over) and every process a heartbeat row, renewed while it lives (inbox-owners.ts): an
  // item whose owner's heartbeat lapsed is taken over by a live process, one item by one process. And the
  // agent settings and work sessions the API edits, shared too.
  `
ALTER TABLE inbox ADD COLUMN owner text COLLATE "C";
CREATE INDEX inbox_owned ON inbox (owner, n) WHERE state IN ('pending', 'running');
CREATE TABLE inbox_owners (owner text COLLATE "C" PRIMARY KEY, expires_at timestamptz NOT NULL);
-- Settings the API and CLI edit that agents.json and work-sessions.json hold on the other stores, one
-- JSON document per name (runtimes/postgres-document.ts); \`version\` grows by one on every change.
CREATE TABLE settings_documents (name text PRIMARY KEY, body jsonb NOT NULL, version bigint NOT NULL DEFAULT 0);
`,
  // 6: the entries whose search words migration 3 had the server fold are folded again as sessiond folds
  // them, in the background (search-reindex.ts), from the newest entry stored before this migration down.
  `
CREATE TABLE search_reindex (upto bigint NOT NULL);
INSERT INTO search_reindex (upto) SELECT max(n) FROM entries HAVING max(n) IS NOT NULL;
`,
  // 7: a fork (or a rewound generation) names the session whose first `fork_seq` entries it reads through.
  `
ALTER TABLE sessions ADD COLUMN fork_of text COLLATE "C";
ALTER TABLE sessions ADD COLUMN fork_key text;
ALTER TABLE sessions ADD COLUMN fork_seq int;
CREATE INDEX sessions_forks ON sessions (fork_of) WHERE fork_of IS NOT NULL;
`,
  // 8: a session's data key, wrapped by the configured key, when the store is encrypted (src/store/encryption/).
  `
ALTER TABLE sessions ADD COLUMN data_key text;
`,
];

export const SCHEMA_VERSION = MIGRATIONS.length;

/** The width of `sessions.activity_bucket` (migration 2), for the list and scan queries. */
export const ACTIVITY_BUCKET = { ms: 60_000 };
