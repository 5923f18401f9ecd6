import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, expect, it, vi } from "vitest";
import type { EntryInput } from "../../src/model/entry.js";
import type { SessionInit } from "../../src/model/session.js";
import type { SearchQuery } from "../../src/search/query.js";
import { SqliteStore, type SqliteStoreOptions } from "../../src/store/sqlite/sqlite-store.js";

const init = (agent = "main"): SessionInit => ({ agent, channel: "telegram", createdBy: "test" });
const user = (content: string): EntryInput => ({ type: "message", role: "user", content });
const assistant = (content: string): EntryInput => ({ type: "message", role: "assistant", content });
/** No fold while the test runs: appended rows stay out of the FTS indexes until the store closes. */
const NO_FOLD: Partial<SqliteStoreOptions> = { foldThreshold: 1_000_000, idleFoldMs: 1_000_000_000 };

let dir: string;
let path: string;
let store: SqliteStore;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "sessiond-search-pending-"));
  path = join(dir, "sessiond.db");
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Every hit of a query, page after page, as `key#seq`. */
async function allPages(query: SearchQuery): Promise<string[]> {
  const out: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.search({ ...query, ...(cursor ? { cursor } : {}) });
    out.push(...page.hits.map((h) => `${h.key}#${h.seq}`));
    cursor = page.nextCursor;
  } while (cursor);
  return out;
}

/** The rows search_rows holds, and how many of them the FTS indexes hold (read from the file). */
function indexState(): { rows: number; indexed: number } {
  const db = new Database(path, { readonly: true });
  try {
    const upto = db.prepare("SELECT indexed_upto FROM search_state").pluck().get() as number;
    return {
      rows: db.prepare("SELECT count(*) FROM search_rows").pluck().get() as number,
      indexed: db.prepare("SELECT count(*) FROM search_rows WHERE row <= ?").pluck().get(upto) as number,
    };
  } finally {
    db.close();
  }
}

function integrityCheck(): void {
  const db = new Database(path);
  try {
    db.exec("INSERT INTO search_words (search_words, rank) VALUES ('integrity-check', 1)");
  } finally {
    db.close();
  }
}

it("finds messages the FTS indexes have not taken yet, with the filters, and each once after they have", async () => {
  store = new SqliteStore({ path });
  for (let i = 0; i < 30; i++)
    await store.append(`old:${i}`, [user(`kestrel old ${i}`), assistant(`kestrel reply ${i}`)], {
      init: init("ops"),
    });
  await store.close();
  store = new SqliteStore({ path, ...NO_FOLD });
  expect(indexState()).toEqual({ rows: 60, indexed: 60 });
  for (let i = 0; i < 30; i++)
    await store.append(`new:${i}`, [user(`kestrel new ${i}`), assistant(`kestrel answer ${i}`)], {
      init: init(i % 2 ? "ops" : "main"),
    });
  await store.append("new:cjk", [user("東京の天気は晴れ")], { init: init() });
  expect(indexState()).toEqual({ rows: 121, indexed: 60 });
  const all = await allPages({ text: "kestrel", limit: 7 });
  expect(all).toHaveLength(120);
  expect(new Set(all).size).toBe(120);
  expect(await allPages({ text: "kestrel", agent: "main", role: "user", limit: 5 })).toHaveLength(15);
  expect(await allPages({ text: "kestrel", role: "assistant", keyPrefix: "new:1" })).toHaveLength(11);
  expect(await allPages({ text: '"kestrel answer"' })).toHaveLength(30);
  expect(await allPages({ text: "kestrel ans" })).toHaveLength(30);
  expect(await allPages({ text: "東京" })).toEqual(["new:cjk#1"]);
  expect(await allPages({ text: "天気は" })).toEqual(["new:cjk#1"]);
  await store.close();
  expect(indexState()).toEqual({ rows: 121, indexed: 121 });
  integrityCheck();
  store = new SqliteStore({ path, ...NO_FOLD });
  const again = await allPages({ text: "kestrel", limit: 7 });
  expect(again.sort()).toEqual(all.sort());
  expect(await allPages({ text: "天気は" })).toEqual(["new:cjk#1"]);
});

it("a deleted session is never found again, whether the FTS indexes hold its rows or not", async () => {
  store = new SqliteStore({ path });
  await store.append("gone", [user("osprey first"), user("osprey second")], { init: init() });
  await store.append("kept", [user("osprey kept")], { init: init() });
  await store.close();
  store = new SqliteStore({ path, ...NO_FOLD });
  await store.append("gone", [user("osprey third")], { init: init() });
  await store.append("kept", [user("osprey kept again")], { init: init() });
  expect(indexState()).toEqual({ rows: 5, indexed: 3 });
  await store.delete("gone");
  expect((await allPages({ text: "osprey" })).sort()).toEqual(["kept#1", "kept#2"]);
  await store.close();
  integrityCheck();
  store = new SqliteStore({ path });
  expect((await allPages({ text: "osprey" })).sort()).toEqual(["kept#1", "kept#2"]);
});

it("indexes rows whose numbers a deleted session's rows had", async () => {
  // Every commit takes its rows into the FTS indexes; the newest rows are then deleted.
  store = new SqliteStore({ path, foldThreshold: 1 });
  await store.append("first", [user("plover one")], { init: init() });
  await store.append("newest", [user("dunlin one"), user("dunlin two")], { init: init() });
  await store.delete("newest");
  await store.append("later", [user("sanderling one")], { init: init() });
  await store.append("later", [user("sanderling two")], { init: init() });
  expect((await allPages({ text: "sanderling" })).sort()).toEqual(["later#1", "later#2"]);
  expect(await allPages({ text: "dunlin" })).toEqual([]);
  await store.close();
  integrityCheck();
  store = new SqliteStore({ path });
  expect((await allPages({ text: "sanderling" })).sort()).toEqual(["later#1", "later#2"]);
});

it("the FTS indexes take the pending rows once 1,000 are pending, and when writes go quiet", async () => {
  store = new SqliteStore({ path, idleFoldMs: 1_000_000_000 });
  const many = (n: number, word: string) => Array.from({ length: n }, (_, i) => user(`${word} ${i}`));
  await store.append("a", many(999, "avocet"), { init: init() });
  expect(indexState()).toEqual({ rows: 999, indexed: 0 });
  await store.append("a", many(1, "avocet"), { init: init() });
  expect(indexState()).toEqual({ rows: 1000, indexed: 1000 });
  await store.close();
  store = new SqliteStore({ path, idleFoldMs: 50 });
  await store.append("b", many(3, "curlew"), { init: init() });
  await vi.waitFor(() => expect(indexState()).toEqual({ rows: 1003, indexed: 1003 }), { timeout: 30_000 });
  expect(await allPages({ text: "curlew" })).toHaveLength(3);
});
