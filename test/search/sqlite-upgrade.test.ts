import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, expect, it } from "vitest";
import type { IndexProgress } from "../../src/search/sqlite/search-index.js";
import { SCHEMA_VERSION } from "../../src/store/sqlite/schema.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";

let dir: string;
let path: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "sessiond-search-upgrade-"));
  path = join(dir, "sessiond.db");
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const SESSIONS = 450;

/** A database as schema v2 left it: sessions and entries, no search tables. */
async function v2Database(): Promise<void> {
  const store = new SqliteStore({ path });
  for (let i = 0; i < SESSIONS; i++)
    await store.append(`k:${i}`, [{ type: "message", role: "user", content: `puffin number ${i}` }], {
      init: { agent: "main", channel: "test", createdBy: "test" },
    });
  await store.close();
  const db = new Database(path);
  db.exec(
    "DROP TABLE search_rows; DROP TABLE search_words; DROP TABLE search_grams; DROP TABLE search_state; DROP TABLE search_terms; DROP TABLE search_sids; PRAGMA user_version = 2",
  );
  db.close();
}

/** The build's reports, and a promise of its last one. */
function progressReports(): {
  reports: IndexProgress[];
  done: Promise<void>;
  report: (p: IndexProgress) => void;
} {
  const reports: IndexProgress[] = [];
  let resolve: () => void = () => undefined;
  const done = new Promise<void>((r) => {
    resolve = r;
  });
  return {
    reports,
    done,
    report: (p) => {
      reports.push(p);
      if (!p.indexing) resolve();
    },
  };
}

it("an upgraded database has its index built in the background, reported, marked in results meanwhile", async () => {
  await v2Database();
  const { reports, done, report } = progressReports();
  const store = new SqliteStore({ path, onIndexProgress: report });
  const first = await store.search({ text: "puffin", limit: 100 });
  expect(first.indexing).toBe(true);
  // An append during the build is found once, whether the build has reached its session or not.
  await store.append("k:new", [{ type: "message", role: "user", content: "puffin newcomer" }], {
    init: { agent: "main", channel: "test", createdBy: "test" },
  });
  await done;
  expect(reports.map((r) => r.doneSid)).toEqual([200, 400, 451]);
  const keys = new Set<string>();
  let cursor: string | undefined;
  let count = 0;
  do {
    const page = await store.search({ text: "puffin", limit: 100, ...(cursor ? { cursor } : {}) });
    expect(page.indexing).toBe(false);
    for (const hit of page.hits) keys.add(hit.key);
    count += page.hits.length;
    cursor = page.nextCursor;
  } while (cursor);
  expect(count).toBe(SESSIONS + 1);
  expect(keys.size).toBe(SESSIONS + 1);
  await store.close();
});

it("a build stopped by a close resumes where it stopped", async () => {
  await v2Database();
  const stopped = await new Promise<Promise<void>>((resolve) => {
    const store: SqliteStore = new SqliteStore({ path, onIndexProgress: () => resolve(store.close()) });
  });
  await stopped;
  const db = new Database(path, { readonly: true });
  expect(db.prepare("SELECT backfill_after FROM search_state").pluck().get()).toBe(200);
  expect(db.prepare("SELECT count(*) FROM search_rows").pluck().get()).toBe(200);
  db.close();
  const { reports, done, report } = progressReports();
  const reopened = new SqliteStore({ path, onIndexProgress: report });
  await done;
  expect(reports.map((r) => r.doneSid)).toEqual([400, 450]);
  expect((await reopened.search({ text: "puffin", limit: 100 })).hits).toHaveLength(100);
  const db2 = new Database(path, { readonly: true });
  expect(db2.prepare("SELECT count(*) FROM search_rows").pluck().get()).toBe(SESSIONS);
  db2.close();
  await reopened.close();
});

/** The search tables of schema v4: the text stored in the word index too, every row written at append. */
const SEARCH_V4 = `
CREATE TABLE search_rows (row INTEGER PRIMARY KEY, sid INTEGER NOT NULL, seq INTEGER NOT NULL, role TEXT NOT NULL,
  ts INTEGER NOT NULL);
CREATE INDEX search_rows_sid ON search_rows (sid);
CREATE VIRTUAL TABLE search_words USING fts5(body, tokenize = 'unicode61 remove_diacritics 2');
CREATE VIRTUAL TABLE search_grams USING fts5(body, tokenize = 'trigram remove_diacritics 1', content = '',
  contentless_delete = 1);
CREATE TABLE search_state (one INTEGER PRIMARY KEY CHECK (one = 1), backfill_after INTEGER);
CREATE TABLE search_terms (term TEXT PRIMARY KEY) WITHOUT ROWID;
INSERT INTO search_state VALUES (1, NULL);
INSERT INTO search_rows (sid, seq, role, ts) SELECT sid, seq, data ->> '$.role', ts FROM entries ORDER BY sid, seq;
INSERT INTO search_words (rowid, body)
  SELECT r.row, e.data ->> '$.content' FROM search_rows r JOIN entries e ON e.sid = r.sid AND e.seq = r.seq;
CREATE VIRTUAL TABLE temp.vocab USING fts5vocab(main, search_words, row);
INSERT INTO search_terms (term) SELECT term FROM temp.vocab;
PRAGMA user_version = 4;
`;

it("a v4 database is upgraded (to v5 and on): its index dropped and built again in the background, reported", async () => {
  await v2Database();
  const db = new Database(path);
  db.exec(SEARCH_V4);
  expect(
    db.prepare("SELECT count(*) FROM search_words WHERE search_words MATCH 'puffin'").pluck().get(),
  ).toBe(SESSIONS);
  db.close();
  const { reports, done, report } = progressReports();
  const store = new SqliteStore({ path, onIndexProgress: report });
  expect((await store.search({ text: "puffin" })).indexing).toBe(true);
  await done;
  expect(reports.map((r) => r.doneSid)).toEqual([200, 400, 450]);
  const keys = new Set<string>();
  let cursor: string | undefined;
  do {
    const page = await store.search({ text: "puff", limit: 100, ...(cursor ? { cursor } : {}) });
    expect(page.indexing).toBe(false);
    for (const hit of page.hits) keys.add(hit.key);
    cursor = page.nextCursor;
  } while (cursor);
  expect(keys.size).toBe(SESSIONS);
  expect((await store.search({ text: '"number 7"' })).hits.map((h) => h.key)).toEqual(["k:7"]);
  await store.close();
  const after = new Database(path, { readonly: true });
  expect(after.pragma("user_version", { simple: true })).toBe(SCHEMA_VERSION);
  // The text is held once, by search_rows, and the word index agrees with it.
  expect(after.prepare("SELECT body FROM search_rows WHERE sid = 8").pluck().get()).toBe("puffin number 7");
  expect(
    after.prepare("SELECT count(*) FROM sqlite_master WHERE name = 'search_words_content'").pluck().get(),
  ).toBe(0);
  after.close();
  const check = new Database(path);
  check.exec("INSERT INTO search_words (search_words, rank) VALUES ('integrity-check', 1)");
  check.close();
});
