import { describe, expect, it } from "vitest";
import type { EntryBody, EntryInput } from "../../model/entry.js";
import { isSearchable } from "../../search/searchable.js";
import { type EntryErasing, isEntryErasing } from "../entry-erasure.js";
import type { Store } from "../store.js";
import { contentOf, type Harness, init, msg, type OpenedFactory } from "./fixtures.js";

const ERASED: EntryBody = { type: "note", code: "ERASED", level: "info", text: "erased" };

const summaryOf = (summary: string): EntryBody => ({
  type: "compaction",
  summary,
  fromSeq: 1,
  throughSeq: 2,
  firstKeptSeq: 3,
  tokensBefore: 10,
  tokensAfter: 2,
  summarizer: "offline",
});

const reply = (content: string): EntryInput => ({ type: "message", role: "assistant", content });

function erasing(store: Store): EntryErasing {
  if (!isEntryErasing(store)) throw new Error(`the ${store.backend} store has no eraseEntries`);
  return store;
}

async function hits(store: Store, text: string): Promise<number> {
  return isSearchable(store) ? (await store.search({ text })).hits.length : 0;
}

/** Erasure's one rewrite of the log: some entries' bodies replaced in place (entry-erasure.ts). */
export function erasureCases(t: Harness, factory: OpenedFactory): void {
  describe("eraseEntries", () => {
    it("replaces the bodies at those seqs and keeps every header, the other entries and what follows", async () => {
      await t.store.append(
        "k:g",
        [
          msg("hello all"),
          msg("my secret is zebra", { idempotencyKey: "m2" }),
          reply("noted zebra"),
          { type: "title", title: "zebra talk" },
          msg("bye"),
        ],
        { init: init() },
      );
      const session = (await t.store.getSession("k:g"))!;
      expect(session.title).toBe("zebra talk");
      const before = await t.store.readEntries(session.id);
      // A store that searches found the words before (an incognito session is not searched: 0 and 0).
      const searchedBefore = isSearchable(t.store)
        ? { zebra: await hits(t.store, "zebra"), bye: await hits(t.store, "bye") }
        : undefined;
      expect(Math.sign(searchedBefore?.zebra ?? 0)).toBe(Math.sign(searchedBefore?.bye ?? 0));
      const result = await erasing(t.store).eraseEntries(session.id, {
        bodies: new Map([
          [2, ERASED],
          [3, ERASED],
          [4, ERASED],
        ]),
        title: "",
      });
      expect(result).toEqual({ rewritten: 3 });
      const after = await t.store.readEntries(session.id);
      expect(after.map((e) => [e.seq, e.id, e.ts])).toEqual(before.map((e) => [e.seq, e.id, e.ts]));
      expect(after.map((e) => e.type)).toEqual(["message", "note", "note", "note", "message"]);
      expect(after[1]).toMatchObject({ code: "ERASED", idempotencyKey: "m2" });
      expect(JSON.stringify(after)).not.toContain("zebra");
      expect(await t.store.getSession("k:g")).toMatchObject({ id: session.id, title: "", entryCount: 5 });
      expect((await t.store.getSessionById(session.id))!.title).toBe("");
      // The context as a turn loads it, and a redelivery of the erased message is still a duplicate.
      expect(JSON.stringify((await t.store.loadContext("k:g"))!.entries)).not.toContain("zebra");
      const again = await t.store.append("k:g", [msg("my secret is zebra", { idempotencyKey: "m2" })]);
      expect(again.entries[0]).toMatchObject({ seq: 2, type: "note" });
      const next = await t.store.append("k:g", [msg("after")]);
      expect(next.entries[0]!.seq).toBe(6);
      if (searchedBefore) {
        expect(await hits(t.store, "zebra")).toBe(0);
        expect(await hits(t.store, "bye")).toBe(searchedBefore.bye);
      }
    });

    it("erases a summary in place: the compaction keeps its pointers, its text goes", async () => {
      await t.store.append("k:c", [msg("one quokka"), reply("two"), msg("three")], { init: init() });
      await t.store.append("k:c", [summaryOf("they said quokka")]);
      const session = (await t.store.getSession("k:c"))!;
      await erasing(t.store).eraseEntries(session.id, {
        bodies: new Map<number, EntryBody>([
          [1, ERASED],
          [4, summaryOf("(erased)")],
        ]),
      });
      const context = (await t.store.loadContext("k:c"))!;
      expect(context.summary).toMatchObject({ seq: 4, summary: "(erased)" });
      expect(context.entries.map(contentOf)).toEqual(["three"]);
      expect(JSON.stringify(await t.store.readEntries(session.id))).not.toContain("quokka");
    });

    it("refuses a fork's inherited seq (its origin holds it) and reads the origin's rewrite through the fork", async () => {
      await t.store.append("k:o", [msg("a"), msg("b walrus"), msg("c")], { init: init() });
      const origin = (await t.store.getSession("k:o"))!;
      const fork = await t.store.fork("k:o", { toKey: "k:of" });
      await expect(
        erasing(t.store).eraseEntries(fork.session.id, { bodies: new Map([[2, ERASED]]) }),
      ).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
      await erasing(t.store).eraseEntries(origin.id, { bodies: new Map([[2, ERASED]]) });
      expect((await t.store.readEntries(fork.session.id)).map((e) => e.type)).toEqual([
        "message",
        "note",
        "message",
      ]);
    });

    if (factory.persistent) {
      it("keeps the rewrite across a reopen", async () => {
        await t.store.append("k:r", [msg("a"), msg("b narwhal"), reply("c narwhal")], { init: init() });
        const id = (await t.store.getSession("k:r"))!.id;
        await erasing(t.store).eraseEntries(id, { bodies: new Map([[2, ERASED]]) });
        await t.store.append("k:r", [msg("d")]);
        await t.store.close();
        t.store = await factory.open(t.dir);
        const entries = await t.store.readEntries(id);
        expect(entries.map((e) => e.type)).toEqual(["message", "note", "message", "message"]);
        expect(entries.map(contentOf)).toEqual(["a", "", "c narwhal", "d"]);
      });
    }
  });
}
