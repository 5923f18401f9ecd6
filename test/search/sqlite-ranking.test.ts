import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { EntryInput } from "../../src/model/entry.js";
import type { SessionInit } from "../../src/model/session.js";
import type { SearchQuery } from "../../src/search/query.js";
import { PREFIX_WORDS, SEARCH_WINDOW, SESSION_SCAN_ROWS } from "../../src/search/sqlite/search-index.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";

const init = (agent = "main"): SessionInit => ({ agent, channel: "telegram", createdBy: "test" });
const user = (content: string, ts?: number): EntryInput => ({
  type: "message",
  role: "user",
  content,
  ...(ts ? { ts } : {}),
});

let dir: string;
let path: string;
let store: SqliteStore;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "sessiond-search-ranking-"));
  path = join(dir, "sessiond.db");
  store = new SqliteStore({ path });
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Every hit of a query, page after page, as `key#seq`. */
async function allPages(query: SearchQuery, between?: () => Promise<void>): Promise<string[]> {
  const out: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.search({ ...query, ...(cursor ? { cursor } : {}) });
    out.push(...page.hits.map((h) => `${h.key}#${h.seq}`));
    cursor = page.nextCursor;
    await between?.();
  } while (cursor);
  return out;
}

describe("SQLite search ranking", () => {
  it("ranks the newest window of matches first: a strong old match comes after the window above it", async () => {
    const ts = Date.now() - 1000;
    await store.append("k:old", [user("otter otter otter otter", ts)], { init: init() });
    const weak = Array.from({ length: SEARCH_WINDOW + 20 }, (_, i) =>
      user(`otter and a long tail of other words, number ${i} of many`, ts),
    );
    await store.append("k:new", weak, { init: init() });
    const first = await store.search({ text: "otter", limit: 20 });
    expect(first.hits.map((h) => h.key)).not.toContain("k:old");
    const all = await allPages({ text: "otter", limit: 50 });
    expect(all).toHaveLength(SEARCH_WINDOW + 21);
    expect(new Set(all).size).toBe(all.length);
    // The old message is the best of the second window, so it leads it.
    expect(all.indexOf("k:old#1")).toBe(SEARCH_WINDOW);
  });

  it("keeps a cursor's pages to what was indexed before its first page, every hit once", async () => {
    for (let i = 0; i < 12; i++)
      await store.append(`k:${i}`, [user(`ibis ibis number ${i}`)], { init: init() });
    let added = 0;
    const paged = await allPages({ text: "ibis", limit: 5 }, async () => {
      // Weaker matches than every one before: a cursor over the whole index would reach them.
      await store.append(`late:${added++}`, [user(`ibis ${"and more words ".repeat(20)}`)], { init: init() });
    });
    expect(paged).toHaveLength(12);
    expect(paged.every((hit) => hit.startsWith("k:"))).toBe(true);
    expect(new Set(paged).size).toBe(12);
  });

  it(`matches the last word typed as a prefix of at most ${PREFIX_WORDS} indexed words, the shortest`, async () => {
    // Words zq + 1..60 letters: the prefix "zq" reaches the 50 shortest.
    const words = Array.from({ length: PREFIX_WORDS + 10 }, (_, i) => `zq${"a".repeat(i + 1)}`);
    await store.append(
      "k:p",
      words.map((w) => user(`the word ${w}`)),
      { init: init() },
    );
    const hits = await allPages({ text: "zq", limit: 100 });
    expect(hits).toHaveLength(PREFIX_WORDS);
    expect(hits).not.toContain(`k:p#${PREFIX_WORDS + 1}`);
    // A word typed out in full is found however many words it begins.
    expect(await allPages({ text: words.at(-1) ?? "" })).toEqual([`k:p#${PREFIX_WORDS + 10}`]);
    expect((await allPages({ text: "the wo" })).length).toBe(PREFIX_WORDS + 10);
  });

  it("filters the same whether the filtered sessions are read whole or the index is walked", async () => {
    // Agent "ops" holds more than SESSION_SCAN_ROWS messages (the index is walked, filters joined),
    // agent "qa" a few (its sessions' messages are read and matched).
    const block = 1000;
    for (let b = 0; b * block <= SESSION_SCAN_ROWS; b++)
      await store.append(
        `ops:${b}`,
        Array.from({ length: block }, (_, i) => user(i % 100 === 0 ? `heron sighting ${i}` : `plain ${i}`)),
        { init: init("ops") },
      );
    await store.append("qa:1", [user("heron sighting qa"), user("plain qa"), user("herons flock")], {
      init: init("qa"),
    });
    const ops = await allPages({ text: "heron", agent: "ops", limit: 100 });
    expect(ops).toHaveLength(6 * 10);
    expect(ops.every((hit) => hit.startsWith("ops:"))).toBe(true);
    expect((await allPages({ text: "heron", agent: "qa" })).sort()).toEqual(["qa:1#1", "qa:1#3"]);
    expect(await allPages({ text: "heron s", agent: "qa" })).toEqual(["qa:1#1"]);
    expect(await allPages({ text: "heron s", agent: "ops", keyPrefix: "ops:2", limit: 100 })).toHaveLength(
      10,
    );
  });
});
