import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { EntryInput } from "../../src/model/entry.js";
import type { SessionInit } from "../../src/model/session.js";
import { MemorySearchIndex } from "../../src/search/memory-index.js";
import type { SearchableStore } from "../../src/search/searchable.js";
import { INDEX_SLICE_CHARS } from "../../src/search/sqlite/search-index.js";
import { JsonlStore } from "../../src/store/jsonl/jsonl-store.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import type { Store } from "../../src/store/store.js";

const init: SessionInit = { agent: "main", channel: "telegram", createdBy: "test" };
const user = (content: string): EntryInput => ({ type: "message", role: "user", content });

/** About `chars` characters of plain words, then `tail` (so only a reader of the whole text finds it). */
function huge(chars: number, tail: string): string {
  const words = "the session layer keeps every message of every chat in order ";
  return `${words.repeat(Math.ceil(chars / words.length))}${tail}`;
}

let dir: string;
let store: (Store & SearchableStore) | undefined;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "sessiond-search-budget-"));
});
afterEach(async () => {
  await store?.close();
  store = undefined;
  rmSync(dir, { recursive: true, force: true });
});

/** Six messages of 300 KB on six sessions, each ending with `needle` and its number. */
async function appendHuge(target: Store): Promise<void> {
  for (let i = 0; i < 6; i++)
    await target.append(`k:${i}`, [user(huge(300_000, `needle number then tail${i}`))], { init });
}

/** A store, and what makes it ready to search after the appends. */
type Opened = { store: Store & SearchableStore; ready?: () => void };

const stores: Array<[string, (dir: string) => Opened]> = [
  [
    // No fold while the test runs: the rows stay out of the FTS indexes (a search reads them itself).
    "sqlite, rows not in the FTS indexes",
    (d) => ({ store: new SqliteStore({ path: join(d, "s.db"), foldThreshold: 1e6, idleFoldMs: 1e9 }) }),
  ],
  [
    "sqlite, rows in the FTS indexes",
    (d) => {
      const sqlite = new SqliteStore({ path: join(d, "s.db"), foldThreshold: 1e6, idleFoldMs: 1e9 });
      return { store: sqlite, ready: () => sqlite.sqlite.searchIndex.indexPending() };
    },
  ],
  ["jsonl", (d) => ({ store: new JsonlStore({ path: d, onProblem: () => undefined }) })],
  ["memory", () => ({ store: new MemoryStore() })],
];

describe.each(stores)("a search of huge messages within its budget (%s)", (_name, open) => {
  it("returns what it found so far with complete: false when the budget is spent, all of it otherwise", async () => {
    const opened = open(dir);
    store = opened.store;
    await appendHuge(store);
    opened.ready?.();
    // A phrase makes the memory store read the texts too.
    const cut = await store.search({ text: '"needle number"' }, { budgetMs: 0 });
    expect(cut.complete).toBe(false);
    expect(cut.hits.length).toBeGreaterThanOrEqual(1);
    expect(cut.hits.length).toBeLessThan(6);
    expect(cut.hits[0]?.snippet).toContain("<mark>needle");
    const whole = await store.search({ text: '"needle number"' });
    expect(whole.complete).toBe(true);
    expect(whole.hits.map((h) => h.key).sort()).toEqual(["k:0", "k:1", "k:2", "k:3", "k:4", "k:5"]);
    // The text at the end of a message, found and shown around its match.
    const last = await store.search({ text: "tail5" });
    expect(last.hits.map((h) => h.key)).toEqual(["k:5"]);
    expect(last.hits[0]?.snippet).toMatch(/^….*<mark>tail5<\/mark>$/);
  });
});

describe("SQLite indexing of big texts", () => {
  function indexed(path: string): { rows: number; indexed: number } {
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

  it("takes them in a slice at a time, and a search after finds the end of the last, by a prefix too", async () => {
    const path = join(dir, "s.db");
    const sqlite = new SqliteStore({ path, foldThreshold: 1e6, idleFoldMs: 1e9 });
    store = sqlite;
    // Each message is two and a half slices long: its words take three steps, then it goes in whole.
    for (let i = 0; i < 3; i++)
      await sqlite.append(`k:${i}`, [user(huge(INDEX_SLICE_CHARS * 2.5, `zebrafinch${i}`))], { init });
    expect(indexed(path)).toEqual({ rows: 3, indexed: 0 });
    // Found while no row is in the FTS indexes, the prefix expanded from the texts themselves.
    expect((await sqlite.search({ text: "zebraf" })).hits).toHaveLength(3);
    const index = sqlite.sqlite.searchIndex;
    // Outside a transaction, each statement commits on its own: enough to see what one step takes.
    const step = () => index.indexPending(INDEX_SLICE_CHARS);
    expect(step()).toBe(true);
    expect(indexed(path)).toEqual({ rows: 3, indexed: 0 });
    let steps = 1;
    while (step()) steps++;
    expect(steps).toBeGreaterThanOrEqual(7);
    expect(indexed(path)).toEqual({ rows: 3, indexed: 3 });
    expect((await sqlite.search({ text: "zebrafinch2" })).hits.map((h) => h.key)).toEqual(["k:2"]);
    // The last word of each text reached search_terms: the prefix finds all three through the index.
    expect((await sqlite.search({ text: "zebraf" })).hits).toHaveLength(3);
    const db = new Database(path, { readonly: true });
    try {
      const terms = db.prepare("SELECT term FROM search_terms WHERE term LIKE 'zebraf%'").pluck().all();
      expect(terms.sort()).toEqual(["zebrafinch0", "zebrafinch1", "zebrafinch2"]);
    } finally {
      db.close();
    }
  });

  it("an idle fold goes on slice after slice until every row is indexed", async () => {
    const path = join(dir, "s.db");
    const sqlite = new SqliteStore({ path, idleFoldMs: 20 });
    store = sqlite;
    for (let i = 0; i < 4; i++)
      await sqlite.append(`k:${i}`, [user(huge(INDEX_SLICE_CHARS + 1000, `tail${i}`))], { init });
    await vi.waitFor(() => expect(indexed(path)).toEqual({ rows: 4, indexed: 4 }), { timeout: 20_000 });
    expect((await sqlite.search({ text: "tail3" })).hits.map((h) => h.key)).toEqual(["k:3"]);
  });
});

describe("the memory store's index", () => {
  it("is not built by appends, only by the first search", async () => {
    const add = vi.spyOn(MemorySearchIndex.prototype, "add");
    try {
      store = new MemoryStore();
      await store.append("k:1", [user("hello there"), user("general kenobi")], { init });
      await store.append("k:2", [user("hello again")], { init });
      expect(add).not.toHaveBeenCalled();
      const result = await store.search({ text: "hello" });
      expect(result.hits).toHaveLength(2);
      expect(add).toHaveBeenCalled();
      // From then on, appends are indexed as they come.
      await store.append("k:3", [user("hello at last")], { init });
      expect((await store.search({ text: "hello" })).hits).toHaveLength(3);
    } finally {
      add.mockRestore();
    }
  });
});
