import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { EntryInput } from "../../src/model/entry.js";
import type { SessionInit } from "../../src/model/session.js";
import type { SearchQuery } from "../../src/search/query.js";
import type { SearchableStore } from "../../src/search/searchable.js";
import type { Store } from "../../src/store/store.js";

export type SearchStore = Store & SearchableStore;

const init = (agent = "main", channel = "telegram"): SessionInit => ({ agent, channel, createdBy: "test" });
const user = (content: string, ts?: number): EntryInput => ({
  type: "message",
  role: "user",
  content,
  ...(ts ? { ts } : {}),
});
const assistant = (content: string): EntryInput => ({ type: "message", role: "assistant", content });

/** What every searchable store does: the same tests over each backend. */
export function runSearchContract(name: string, open: (dir: string) => Promise<SearchStore>): void {
  describe(`search: ${name}`, () => {
    let dir: string;
    let store: SearchStore;
    beforeEach(async () => {
      dir = mkdtempSync(join(tmpdir(), "sessiond-search-"));
      store = await open(dir);
    });
    afterEach(async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    });
    const keys = async (query: SearchQuery) => (await store.search(query)).hits.map((h) => h.key);

    it("finds a message right after its append is acknowledged, with key, generation, seq, role and time", async () => {
      const { entries, session } = await store.append("telegram:1", [user("the zebra crossing")], {
        init: init(),
      });
      const { hits, indexing } = await store.search({ text: "zebra" });
      expect(indexing).toBe(false);
      expect(hits).toEqual([
        {
          key: "telegram:1",
          sessionId: session.id,
          generation: 1,
          archived: false,
          seq: 1,
          role: "user",
          ts: entries[0]?.ts,
          agent: "main",
          channel: "telegram",
          snippet: "the <mark>zebra</mark> crossing",
        },
      ]);
    });

    it("indexes only user and assistant text: not tool output, notes or summaries", async () => {
      await store.append(
        "k:1",
        [
          { type: "message", role: "tool", content: "walrus from a tool" },
          { type: "message", role: "system", content: "walrus instructions" },
          { type: "note", text: "walrus note" },
          assistant("a walrus answer"),
        ],
        { init: init() },
      );
      const { hits } = await store.search({ text: "walrus" });
      expect(hits.map((h) => [h.seq, h.role])).toEqual([[4, "assistant"]]);
    });

    it("needs every word, matches the last as a prefix (as you type) and phrases as written", async () => {
      await store.append("k:a", [user("red apple pie")], { init: init() });
      await store.append("k:b", [user("apple red pie")], { init: init() });
      await store.append("k:c", [user("red car")], { init: init() });
      expect((await keys({ text: "apple red" })).sort()).toEqual(["k:a", "k:b"]);
      expect(await keys({ text: '"red apple"' })).toEqual(["k:a"]);
      expect((await keys({ text: "red app" })).sort()).toEqual(["k:a", "k:b"]);
    });

    it("ranks by relevance combined with recency", async () => {
      const day = 24 * 3600_000;
      const now = Date.now();
      await store.append("k:old", [user("otter otter otter", now - 365 * day)], { init: init() });
      await store.append("k:new", [user("otter otter otter", now - day)], { init: init() });
      await store.append("k:weak", [user(`otter ${"filler words here ".repeat(30)}`, now - day)], {
        init: init(),
      });
      expect(await keys({ text: "otter" })).toEqual(["k:new", "k:weak", "k:old"]);
    });

    it("filters by agent, channel, key prefix, role, date range and archived", async () => {
      const t0 = Date.now() - 10_000;
      await store.append("telegram:1", [user("heron one", t0), assistant("heron two")], {
        init: init("main"),
      });
      await store.append("slack:1", [user("heron three")], { init: init("ops", "slack") });
      await store.reset("slack:1", "manual", init("ops", "slack"));
      await store.append("slack:1", [user("heron four")], { init: init("ops", "slack") });
      expect((await keys({ text: "heron", agent: "ops" })).length).toBe(2);
      expect(await keys({ text: "heron", channel: "telegram" })).toEqual(["telegram:1", "telegram:1"]);
      expect(await keys({ text: "heron", keyPrefix: "slack:" })).toEqual(["slack:1", "slack:1"]);
      expect((await store.search({ text: "heron", role: "assistant" })).hits.map((h) => h.seq)).toEqual([2]);
      expect((await store.search({ text: "heron", until: t0 + 1 })).hits.map((h) => h.seq)).toEqual([1]);
      const archived = await store.search({ text: "heron", archived: "only" });
      expect(archived.hits.map((h) => [h.key, h.generation, h.archived])).toEqual([["slack:1", 1, true]]);
      const current = await store.search({ text: "heron", archived: "exclude", keyPrefix: "slack:" });
      expect(current.hits.map((h) => [h.generation, h.archived])).toEqual([[2, false]]);
    });

    it("pages with a keyset cursor: every hit once, in rank order", async () => {
      for (let i = 0; i < 7; i++) await store.append(`k:${i}`, [user(`ibis number ${i}`)], { init: init() });
      const all = (await store.search({ text: "ibis", limit: 100 })).hits.map((h) => h.key);
      const paged: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await store.search({ text: "ibis", limit: 3, ...(cursor ? { cursor } : {}) });
        paged.push(...page.hits.map((h) => h.key));
        cursor = page.nextCursor;
      } while (cursor);
      expect(paged).toEqual(all);
      expect(all).toHaveLength(7);
      await expect(store.search({ text: "ibis", cursor: "nonsense" })).rejects.toMatchObject({
        code: "INVALID_ARGUMENT",
      });
    });

    it("finds accented text without its accents and the other way round", async () => {
      await store.append("k:fr", [user("Le café est très crème")], { init: init() });
      expect(await keys({ text: "cafe creme" })).toEqual(["k:fr"]);
      expect(await keys({ text: "TRÈS" })).toEqual(["k:fr"]);
      expect((await store.search({ text: "cafe" })).hits[0]?.snippet).toBe(
        "Le <mark>café</mark> est très crème",
      );
    });

    it("finds CJK text and substrings of it", async () => {
      await store.append("k:zh", [user("我们明天去北京大学参观")], { init: init() });
      await store.append("k:ja", [user("東京タワーに行きました")], { init: init() });
      expect(await keys({ text: "北京大学" })).toEqual(["k:zh"]);
      expect(await keys({ text: "北京" })).toEqual(["k:zh"]);
      expect(await keys({ text: "タワー" })).toEqual(["k:ja"]);
      expect((await store.search({ text: "北京" })).hits[0]?.snippet).toBe(
        "我们明天去<mark>北京</mark>大学参观",
      );
    });

    it("escapes HTML in snippets and never shows a secret", async () => {
      const secret = "sk-proj-Abc123Def456Ghi789Jkl012";
      await store.append("k:h", [user(`<script>alert("x")</script> penguin & key ${secret}`)], {
        init: init(),
      });
      const [hit] = (await store.search({ text: "penguin" })).hits;
      expect(hit?.snippet).toBe(
        "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; <mark>penguin</mark> &amp; key [redacted]",
      );
      expect((await store.search({ text: "Abc123Def456" })).hits).toEqual([]);
    });

    it("keeps archived generations findable after a reset, and a deleted session is never found again", async () => {
      await store.append("k:r", [user("lynx before the reset")], { init: init() });
      await store.reset("k:r", "manual", init());
      await store.append("k:r", [user("lynx after the reset")], { init: init() });
      const after = await store.search({ text: "lynx" });
      expect(after.hits.map((h) => [h.generation, h.archived]).sort()).toEqual([
        [1, true],
        [2, false],
      ]);
      await store.delete("k:r");
      expect((await store.search({ text: "lynx" })).hits).toEqual([]);
      await store.append("k:r", [user("a new start")], { init: init() });
      expect((await store.search({ text: "lynx" })).hits).toEqual([]);
    });

    it("follows a rekey to the new key", async () => {
      await store.append("old:1", [user("gecko moved")], { init: init() });
      await store.rekey("old:1", "new:1");
      expect(await keys({ text: "gecko" })).toEqual(["new:1"]);
    });

    it("refuses bad queries with INVALID_ARGUMENT", async () => {
      for (const query of [
        { text: "  " },
        { text: "x".repeat(201) },
        { text: "a", limit: 0 },
        { text: "...", limit: 5 },
      ])
        await expect(store.search(query)).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    });
  });
}
