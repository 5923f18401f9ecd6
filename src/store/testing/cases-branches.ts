import { describe, expect, it } from "vitest";
import type { EntryInput } from "../../model/entry.js";
import { contentOf, type Harness, init, msg, type OpenedFactory } from "./fixtures.js";

const reply = (content: string): EntryInput => ({ type: "message", role: "assistant", content });

const compaction = (summary: string, throughSeq: number, firstKeptSeq: number): EntryInput => ({
  type: "compaction",
  summary,
  fromSeq: 1,
  throughSeq,
  firstKeptSeq,
  tokensBefore: 10,
  tokensAfter: 2,
  summarizer: "offline",
});

/** Forks and rewinds: a session that references another's first entries instead of copying them. */
export function branchCases(t: Harness, factory: OpenedFactory): void {
  const texts = async (sessionId: string, range?: Parameters<typeof t.store.readEntries>[1]) =>
    (await t.store.readEntries(sessionId, range)).map(contentOf);

  describe("fork", () => {
    it("forks at the head: the fork's history is the parent's, the parent is unchanged, each goes on alone", async () => {
      await t.store.append("k:p", [msg("one"), reply("two"), msg("three")], { init: init() });
      const parent = (await t.store.getSession("k:p"))!;
      const { session, forkedFrom } = await t.store.fork("k:p", { toKey: "k:f" });
      expect(forkedFrom).toEqual({ key: "k:p", sessionId: parent.id, seq: 3 });
      expect(session).toMatchObject({
        key: "k:f",
        entryCount: 3,
        messageCount: 3,
        forkedFrom,
        agent: "main",
      });
      expect(await texts(session.id)).toEqual(["one", "two", "three"]);
      const own = await t.store.append("k:f", [msg("fork only")]);
      expect(own.entries[0]!.seq).toBe(4);
      await t.store.append("k:p", [msg("parent only")]);
      expect(await texts(session.id)).toEqual(["one", "two", "three", "fork only"]);
      expect(await texts(parent.id)).toEqual(["one", "two", "three", "parent only"]);
      // Inherited entries are part of the fork's history: they carry its session id, and their own ids.
      const inherited = await t.store.readEntries(session.id);
      expect(new Set(inherited.map((e) => e.sessionId))).toEqual(new Set([session.id]));
      expect(inherited[0]!.id).toBe((await t.store.readEntries(parent.id))[0]!.id);
      const context = (await t.store.loadContext("k:f"))!;
      expect(context.entries.map(contentOf)).toEqual(["one", "two", "three", "fork only"]);
      expect(context.session.messageCount).toBe(4);
      expect((await t.store.getSession("k:f"))!.forkedFrom).toEqual(forkedFrom);
      expect((await t.store.forksOf([parent.id])).map((s) => s.key)).toEqual(["k:f"]);
    });

    it("forks at an earlier entry with its counts, and its compaction as it stood there", async () => {
      await t.store.append("k:pc", [msg("a"), reply("b"), msg("c")], { init: init() });
      await t.store.append("k:pc", [compaction("S1", 2, 3)]);
      await t.store.append("k:pc", [reply("d"), msg("e"), reply("f")]);
      await t.store.append("k:pc", [compaction("S2", 6, 7)]);
      await t.store.append("k:pc", [msg("g")]);
      const early = await t.store.fork("k:pc", { toKey: "k:pc-early", atSeq: 2 });
      expect(early.session).toMatchObject({ entryCount: 2, messageCount: 2, contextFromSeq: 1 });
      expect(early.session.lastCompactionSeq).toBeUndefined();
      const middle = await t.store.fork("k:pc", { toKey: "k:pc-mid", atSeq: 6 });
      expect(middle.session).toMatchObject({
        entryCount: 6,
        messageCount: 5,
        contextFromSeq: 3,
        lastCompactionSeq: 4,
      });
      const context = (await t.store.loadContext("k:pc-mid"))!;
      expect(context.summary).toMatchObject({ summary: "S1", seq: 4 });
      expect(context.entries.map(contentOf)).toEqual(["c", "d", "e"]);
      await t.store.append("k:pc-mid", [msg("h")]);
      expect((await t.store.loadContext("k:pc-mid"))!.entries.map(contentOf)).toEqual(["c", "d", "e", "h"]);
    });

    it("reads a fork of a fork in ranges and pages across its origins, both ways", async () => {
      await t.store.append("k:g1", [msg("1"), msg("2"), msg("3")], { init: init() });
      await t.store.fork("k:g1", { toKey: "k:g2", atSeq: 2 });
      await t.store.append("k:g2", [msg("g2-3"), msg("g2-4")]);
      const g3 = await t.store.fork("k:g2", { toKey: "k:g3", atSeq: 3 });
      await t.store.append("k:g3", [msg("g3-4"), msg("g3-5")]);
      const id = g3.session.id;
      expect(await texts(id)).toEqual(["1", "2", "g2-3", "g3-4", "g3-5"]);
      expect(await texts(id, { order: "desc", limit: 4 })).toEqual(["g3-5", "g3-4", "g2-3", "2"]);
      expect(await texts(id, { afterSeq: 1, beforeSeq: 5 })).toEqual(["2", "g2-3", "g3-4"]);
      expect(await texts(id, { afterSeq: 1, limit: 2 })).toEqual(["2", "g2-3"]);
      expect(await texts(id, { beforeSeq: 3, order: "desc" })).toEqual(["2", "1"]);
      expect((await t.store.readEntries(id)).map((e) => e.seq)).toEqual([1, 2, 3, 4, 5]);
    });

    it("treats an idempotency key of the inherited entries as stored, and one after the fork point as new", async () => {
      await t.store.append("k:ip", [msg("a", { idempotencyKey: "m1" }), msg("b", { idempotencyKey: "m2" })], {
        init: init(),
      });
      await t.store.fork("k:ip", { toKey: "k:if", atSeq: 1 });
      const again = await t.store.append("k:if", [msg("a again", { idempotencyKey: "m1" })]);
      expect(again.created).toEqual([false]);
      expect(again.entries[0]).toMatchObject({ seq: 1, content: "a" });
      const later = await t.store.append("k:if", [msg("b in the fork", { idempotencyKey: "m2" })]);
      expect(later.created).toEqual([true]);
      expect(later.entries[0]!.seq).toBe(2);
    });

    it("refuses a key that has a session, a seq past the head, and a key with none", async () => {
      await t.store.append("k:r", [msg("x")], { init: init() });
      await t.store.append("k:taken", [msg("y")], { init: init() });
      await expect(t.store.fork("k:r", { toKey: "k:taken" })).rejects.toMatchObject({ code: "KEY_TAKEN" });
      await expect(t.store.fork("k:r", { toKey: "k:n", atSeq: 2 })).rejects.toMatchObject({
        code: "INVALID_ARGUMENT",
      });
      await expect(t.store.fork("k:none", { toKey: "k:n" })).rejects.toMatchObject({
        code: "SESSION_NOT_FOUND",
      });
      expect(await t.store.getSession("k:n")).toBeUndefined();
    });
  });

  describe("rewind", () => {
    it("continues the key from before an entry; what came after stays readable in the archived generation", async () => {
      await t.store.append("k:rw", [msg("q1"), reply("a1"), msg("q2"), reply("a2")], { init: init() });
      const before = (await t.store.getSession("k:rw"))!;
      const result = await t.store.rewind("k:rw", { toSeq: 3, expectHead: 4 });
      expect(result.forkedFrom).toEqual({ key: "k:rw", sessionId: before.id, seq: 2 });
      expect(result.current).toMatchObject({ key: "k:rw", generation: 2, entryCount: 2, state: "active" });
      expect(result.archived).toMatchObject({ id: before.id, state: "archived" });
      const next = await t.store.append("k:rw", [msg("q2 again")]);
      expect(next.entries[0]!.seq).toBe(3);
      expect((await t.store.loadContext("k:rw"))!.entries.map(contentOf)).toEqual(["q1", "a1", "q2 again"]);
      const old = await t.store.readEntries(before.id);
      expect(old.map(contentOf).slice(0, 4)).toEqual(["q1", "a1", "q2", "a2"]);
      expect(old.at(-1)).toMatchObject({ type: "reset", cause: "rewind", nextSessionId: result.current.id });
      expect((await t.store.generations("k:rw")).map((s) => s.generation)).toEqual([2, 1]);
    });

    it("fails with SESSION_CHANGED when the head moved since the rewind was computed, and changes nothing", async () => {
      await t.store.append("k:cas", [msg("a"), msg("b")], { init: init() });
      await t.store.append("k:cas", [msg("c")]);
      await expect(t.store.rewind("k:cas", { toSeq: 2, expectHead: 2 })).rejects.toMatchObject({
        code: "SESSION_CHANGED",
      });
      const session = (await t.store.getSession("k:cas"))!;
      expect(session).toMatchObject({ generation: 1, entryCount: 3 });
      await expect(t.store.rewind("k:cas", { toSeq: 0 })).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
      // Past the head there is nothing to leave out: refused, naming the seq asked for.
      await expect(t.store.rewind("k:cas", { toSeq: 4 })).rejects.toMatchObject({
        code: "INVALID_ARGUMENT",
        message: expect.stringContaining("toSeq 4 is not an entry"),
      });
      expect(await t.store.getSession("k:cas")).toMatchObject({ generation: 1, entryCount: 3 });
    });
  });

  describe("deleting a forked history", () => {
    it("refuses to delete a history a fork reads through, until the fork is gone; a key's own rewinds go with it", async () => {
      await t.store.append("k:dp", [msg("a"), msg("b")], { init: init() });
      await t.store.rewind("k:dp", { toSeq: 2 });
      await t.store.fork("k:dp", { toKey: "k:df" });
      await expect(t.store.delete("k:dp")).rejects.toMatchObject({ code: "SESSION_HAS_FORKS" });
      expect((await t.store.generations("k:dp")).length).toBe(2);
      const archived = (await t.store.generations("k:dp"))[1]!;
      await expect(t.store.deleteGeneration(archived.id)).rejects.toMatchObject({
        code: "SESSION_HAS_FORKS",
      });
      expect(await t.store.delete("k:df")).toMatchObject({ sessions: 1 });
      expect(await t.store.delete("k:dp")).toMatchObject({ sessions: 2 });
    });
  });

  if (factory.persistent) {
    describe("after a reopen", () => {
      it("reads forks and rewound generations through their origins as before", async () => {
        await t.store.append("k:ro", [msg("a"), reply("b"), msg("c")], { init: init() });
        const fork = await t.store.fork("k:ro", { toKey: "k:ro-f", atSeq: 2 });
        await t.store.append("k:ro-f", [msg("f3")]);
        await t.store.rewind("k:ro", { toSeq: 3 });
        await t.store.append("k:ro", [msg("c2")]);
        await t.store.close();
        t.store = await factory.open(t.dir);
        expect(await texts(fork.session.id)).toEqual(["a", "b", "f3"]);
        expect(await t.store.getSession("k:ro-f")).toMatchObject({
          entryCount: 3,
          messageCount: 3,
          forkedFrom: fork.forkedFrom,
        });
        expect((await t.store.loadContext("k:ro"))!.entries.map(contentOf)).toEqual(["a", "b", "c2"]);
        expect(await t.store.getSession("k:ro")).toMatchObject({ entryCount: 3, messageCount: 3 });
      });
    });
  }
}
