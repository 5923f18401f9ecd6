import { describe, expect, it } from "vitest";
import type { EntryInput } from "../../model/entry.js";
import { type Harness, init, msg } from "./fixtures.js";

/** Context, listing, resets and generations, the expected session, archive and rekey, scans. */
export function sessionCases(t: Harness): void {
  describe("context", () => {
    it("loads everything before any compaction, then only the latest summary and what it keeps", async () => {
      expect(await t.store.loadContext("k:c")).toBeUndefined();
      await t.store.append(
        "k:c",
        Array.from({ length: 6 }, (_, i) => msg(`m${i + 1}`)),
        { init: init() },
      );
      const before = (await t.store.loadContext("k:c"))!;
      expect(before.summary).toBeUndefined();
      expect(before.entries.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6]);

      const compaction = (through: number, kept: number, summary: string): EntryInput => ({
        type: "compaction",
        summary,
        fromSeq: 1,
        throughSeq: through,
        firstKeptSeq: kept,
        tokensBefore: 60,
        tokensAfter: 20,
        summarizer: "offline",
      });
      await t.store.append("k:c", [compaction(4, 5, "first summary")]); // seq 7
      await t.store.append("k:c", [msg("m8")]);
      const after = (await t.store.loadContext("k:c"))!;
      expect(after.summary).toMatchObject({ seq: 7, summary: "first summary" });
      expect(after.entries.map((e) => e.seq)).toEqual([5, 6, 8]);
      expect(after.session).toMatchObject({ contextFromSeq: 5, lastCompactionSeq: 7 });

      await t.store.append("k:c", [compaction(6, 8, "second summary")]); // seq 9
      const again = (await t.store.loadContext("k:c"))!;
      expect(again.summary).toMatchObject({ seq: 9, summary: "second summary" });
      expect(again.entries.map((e) => e.seq)).toEqual([8]);
      // Nothing before the compaction is deleted.
      expect((await t.store.readEntries(after.session.id)).length).toBe(9);
    });
  });

  describe("listing", () => {
    async function seed(n: number): Promise<string[]> {
      const keys: string[] = [];
      for (let i = 0; i < n; i++) {
        const key = `k:list:${String(i).padStart(3, "0")}`;
        keys.push(key);
        await t.store.append(key, [msg("x")], {
          init: init(`u${i}`, i % 2 === 0 ? "even" : "odd", i % 3 === 0 ? "tg" : "dc"),
        });
      }
      return keys;
    }

    it("pages through every session exactly once, newest first", async () => {
      const keys = await seed(23);
      const seen: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await t.store.listSessions({ limit: 5, cursor });
        seen.push(...page.sessions.map((s) => s.key));
        cursor = page.nextCursor;
        pages++;
      } while (cursor);
      expect(pages).toBe(5);
      expect(seen).toEqual([...keys].reverse());
    });

    it("filters by agent, channel and activity, and sorts by activity", async () => {
      const keys = await seed(12);
      const even = await t.store.listSessions({ agent: "even", limit: 100 });
      expect(even.sessions.map((s) => s.key).sort()).toEqual(keys.filter((_, i) => i % 2 === 0));
      const tg = await t.store.listSessions({ channel: "tg", limit: 100 });
      expect(tg.sessions.map((s) => s.key).sort()).toEqual(keys.filter((_, i) => i % 3 === 0));
      const both = await t.store.listSessions({ channel: "tg", agent: "odd" });
      expect(both.sessions.map((s) => s.key).sort()).toEqual(["k:list:003", "k:list:009"]);

      await new Promise((r) => setTimeout(r, 5));
      const since = Date.now();
      await t.store.append(keys[2]!, [msg("later")]);
      const active = await t.store.listSessions({ activeSince: since });
      expect(active.sessions.map((s) => s.key)).toEqual([keys[2]]);
      const byActivity = await t.store.listSessions({ sort: "activity", limit: 2 });
      expect(byActivity.sessions[0]!.key).toBe(keys[2]);
      const next = await t.store.listSessions({
        sort: "activity",
        limit: 100,
        cursor: byActivity.nextCursor,
      });
      expect(next.sessions).toHaveLength(10);
      expect(next.sessions.map((s) => s.key)).not.toContain(keys[2]);
    });

    it("rejects bad limits and cursors clearly", async () => {
      await expect(t.store.listSessions({ limit: 0 })).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
      await expect(t.store.listSessions({ limit: 1001 })).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
      await expect(t.store.listSessions({ cursor: "garbage!" })).rejects.toMatchObject({
        code: "INVALID_ARGUMENT",
      });
      await seed(3);
      const page = await t.store.listSessions({ limit: 1 });
      await expect(t.store.listSessions({ sort: "activity", cursor: page.nextCursor })).rejects.toMatchObject(
        {
          code: "INVALID_ARGUMENT",
        },
      );
    });

    it("stays stable while others write: no session repeated or skipped", async () => {
      const keys = await seed(40);
      let writing = true;
      let n = 0;
      const writer = (async () => {
        while (writing) {
          await t.store.append(keys[n % keys.length]!, [msg("busy")]);
          await t.store.append(`k:new:${n}`, [msg("new")], { init: init() });
          n++;
          // A store that answers in microtasks would otherwise starve the reader.
          await new Promise((r) => setImmediate(r));
        }
      })();
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await t.store.listSessions({ limit: 3, cursor });
        seen.push(...page.sessions.map((s) => s.key));
        cursor = page.nextCursor;
        await new Promise((r) => setImmediate(r));
      } while (cursor);
      writing = false;
      await writer;
      expect(n).toBeGreaterThan(0);
      expect(new Set(seen).size).toBe(seen.length);
      for (const key of keys) expect(seen).toContain(key);
    });
  });

  describe("reset and generations", () => {
    it("archives the session with a reset entry and starts the next generation", async () => {
      const { session: first } = await t.store.append("k:g", [msg("a", { idempotencyKey: "p1" }), msg("b")], {
        init: init(),
      });
      const result = await t.store.reset("k:g", "trigger");
      expect(result.archived).toMatchObject({
        id: first.id,
        state: "archived",
        generation: 1,
        entryCount: 3,
      });
      expect(result.archived.archivedAt).toBeTypeOf("number");
      expect(result.resetEntry).toMatchObject({
        type: "reset",
        cause: "trigger",
        seq: 3,
        sessionId: first.id,
      });
      expect(result.resetEntry.nextSessionId).toBe(result.current.id);
      expect(result.current).toMatchObject({ key: "k:g", generation: 2, state: "active", entryCount: 0 });
      expect(result.current).toMatchObject({ agent: "main", channel: "telegram", createdBy: "u1" });

      // The same idempotency key is a new message in the new generation.
      const again = await t.store.append("k:g", [msg("a", { idempotencyKey: "p1" })]);
      expect(again.created).toEqual([true]);
      expect(again.entries[0]!.seq).toBe(1);

      const gens = await t.store.generations("k:g");
      expect(gens.map((g) => [g.generation, g.state])).toEqual([
        [2, "active"],
        [1, "archived"],
      ]);
      expect((await t.store.readEntries(first.id)).map((e) => e.type)).toEqual([
        "message",
        "message",
        "reset",
      ]);
      expect((await t.store.loadContext("k:g"))!.entries).toHaveLength(1);

      const listed = await t.store.listSessions({ includeArchived: true });
      expect(listed.sessions.map((s) => s.generation).sort()).toEqual([1, 2]);
      expect((await t.store.listSessions()).sessions.map((s) => s.generation)).toEqual([2]);
      await expect(t.store.reset("k:unknown", "manual")).rejects.toMatchObject({ code: "SESSION_NOT_FOUND" });
    });
  });

  describe("writes land in the generation they were computed for", () => {
    it("an append expecting a session that is no longer current fails with SESSION_CHANGED and stores nothing", async () => {
      const { session: first } = await t.store.append("k:exp", [msg("a")], { init: init() });
      const ok = await t.store.append("k:exp", [msg("b")], { expectSessionId: first.id });
      expect(ok.entries[0]!.seq).toBe(2);

      const { current } = await t.store.reset("k:exp", "manual");
      await expect(
        t.store.append("k:exp", [msg("late reply")], { expectSessionId: first.id }),
      ).rejects.toMatchObject({
        code: "SESSION_CHANGED",
        details: { key: "k:exp", expectedSessionId: first.id },
      });
      expect((await t.store.getSession("k:exp"))!.entryCount).toBe(0);
      expect((await t.store.readEntries(first.id)).map((e) => e.seq)).toEqual([1, 2, 3]);

      // Archived with nothing after it, or deleted: the append starts no session.
      await t.store.archive("k:exp", "manual");
      await expect(
        t.store.append("k:exp", [msg("late")], { init: init(), expectSessionId: current.id }),
      ).rejects.toMatchObject({ code: "SESSION_CHANGED" });
      expect(await t.store.getSession("k:exp")).toBeUndefined();
      expect(await t.store.generations("k:exp")).toHaveLength(2);
      await t.store.append("k:exp2", [msg("x")], { init: init() });
      const gone = (await t.store.getSession("k:exp2"))!;
      await t.store.delete("k:exp2");
      await expect(
        t.store.append("k:exp2", [msg("late")], { init: init(), expectSessionId: gone.id }),
      ).rejects.toMatchObject({ code: "SESSION_CHANGED" });
      expect(await t.store.generations("k:exp2")).toEqual([]);
    });
  });

  describe("archive, generations and rekey", () => {
    it("archives without starting a new session; the next append starts one", async () => {
      await t.store.append("k:a", [msg("a")], { init: init() });
      const { archived, resetEntry } = await t.store.archive("k:a", "idle");
      expect(archived).toMatchObject({ state: "archived", generation: 1, entryCount: 2 });
      expect(resetEntry).toMatchObject({ type: "reset", cause: "idle", seq: 2 });
      expect(resetEntry.nextSessionId).toBeUndefined();
      expect(await t.store.getSession("k:a")).toBeUndefined();
      await expect(t.store.archive("k:a", "idle")).rejects.toMatchObject({ code: "SESSION_NOT_FOUND" });
      const next = await t.store.append("k:a", [msg("b")], { init: init() });
      expect(next.session.generation).toBe(2);
    });

    it("deletes one archived generation, never the current one", async () => {
      const { session: first } = await t.store.append("k:dg", [msg("a"), msg("b")], { init: init() });
      const { current } = await t.store.reset("k:dg", "manual");
      expect(await t.store.deleteGeneration(first.id)).toEqual({ sessions: 1, entries: 3 });
      expect((await t.store.generations("k:dg")).map((g) => g.id)).toEqual([current.id]);
      expect(await t.store.readEntries(first.id)).toEqual([]);
      await expect(t.store.deleteGeneration(current.id)).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
      expect(await t.store.deleteGeneration("01NOPE")).toEqual({ sessions: 0, entries: 0 });
    });

    it("carries a key's history over to another key that has none", async () => {
      const { session } = await t.store.append("discord:dm:987", [msg("from discord")], {
        init: init("987"),
      });
      expect(await t.store.rekey("discord:dm:987", "telegram:123")).toEqual({ moved: 1 });
      expect(await t.store.getSession("discord:dm:987")).toBeUndefined();
      expect(await t.store.generations("discord:dm:987")).toEqual([]);
      const moved = (await t.store.getSession("telegram:123"))!;
      expect(moved).toMatchObject({ id: session.id, key: "telegram:123", generation: 1, state: "active" });
      const next = await t.store.append("telegram:123", [msg("continues")]);
      expect(next.entries[0]!.seq).toBe(2);
    });

    it("keeps both histories readable when both keys have one, the target's staying current", async () => {
      const { session: a } = await t.store.append("old:1", [msg("old")], { init: init() });
      await t.store.reset("old:1", "manual");
      const { session: b } = await t.store.append("new:1", [msg("new")], { init: init() });
      const { session: c } = await t.store.append("old:1", [msg("old again")]);
      expect(await t.store.rekey("old:1", "new:1")).toEqual({ moved: 2 });
      const gens = await t.store.generations("new:1");
      // Numbered by creation: old:1's second session was started by the reset, before new:1's.
      expect(gens.map((g) => [g.id, g.generation, g.state])).toEqual([
        [b.id, 3, "active"],
        [c.id, 2, "archived"],
        [a.id, 1, "archived"],
      ]);
      const closed = await t.store.readEntries(c.id);
      expect(closed.at(-1)).toMatchObject({ type: "reset", cause: "relink" });
      expect((await t.store.getSession("new:1"))!.id).toBe(b.id);
      expect(await t.store.generations("old:1")).toEqual([]);
    });
  });

  describe("scans", () => {
    it("finds idle current sessions and old archived ones in time order, by prefix, page by page", async () => {
      const t0 = Date.now() - 100_000;
      for (let i = 0; i < 6; i++) {
        const key = i % 2 ? `webhook:main:alert:ts-${i}` : `telegram:${i}`;
        await t.store.append(key, [msg("x", { ts: t0 + i * 1000 })], { init: init() });
      }
      await t.store.append("telegram:fresh", [msg("now")], { init: init() });
      const idle = await t.store.scanSessions({ state: "active", inactiveBefore: t0 + 3500 });
      expect(idle.map((s) => s.key)).toEqual([
        "telegram:0",
        "webhook:main:alert:ts-1",
        "telegram:2",
        "webhook:main:alert:ts-3",
      ]);
      const hooks = await t.store.scanSessions({
        state: "active",
        inactiveBefore: Date.now() + 1,
        keyPrefix: "webhook:",
      });
      expect(hooks.map((s) => s.key)).toEqual([
        "webhook:main:alert:ts-1",
        "webhook:main:alert:ts-3",
        "webhook:main:alert:ts-5",
      ]);
      const page1 = await t.store.scanSessions({ state: "active", limit: 2 });
      const last = page1.at(-1)!;
      const page2 = await t.store.scanSessions({
        state: "active",
        limit: 10,
        after: { time: last.lastActivityAt, id: last.id },
      });
      expect([...page1, ...page2].map((s) => s.key)).toHaveLength(7);
      expect(new Set([...page1, ...page2].map((s) => s.id)).size).toBe(7);

      await t.store.archive("telegram:0", "idle");
      const archived = await t.store.scanSessions({ state: "archived", archivedBefore: Date.now() + 1 });
      expect(archived.map((s) => s.key)).toEqual(["telegram:0"]);
      expect(await t.store.scanSessions({ state: "archived", archivedBefore: 1 })).toEqual([]);
      await expect(t.store.scanSessions({ state: "active", limit: 0 })).rejects.toMatchObject({
        code: "INVALID_ARGUMENT",
      });
    });
  });
}
