import { describe, expect, it } from "vitest";
import { type Harness, init, msg, type OpenedFactory } from "./fixtures.js";

/** Durability per append, delete, keys as data, closing, and (for a persistent store) reopening. */
export function lifecycleCases(t: Harness, factory: OpenedFactory): void {
  describe("durability per append", () => {
    it("takes relaxed appends beside strict ones, and sync makes them all durable", async () => {
      await t.store.append("k:r1", [msg("strict")], { init: init() });
      await t.store.append("k:r1", [msg("relaxed")], { durability: "relaxed" });
      await t.store.sync();
      const session = (await t.store.getSession("k:r1"))!;
      expect((await t.store.readEntries(session.id)).map((e) => e.seq)).toEqual([1, 2]);
    });
  });

  describe("delete", () => {
    it("deletes every generation and entry of a key, and only that key", async () => {
      await t.store.append("k:d", [msg("a"), msg("b")], { init: init() });
      await t.store.reset("k:d", "manual");
      await t.store.append("k:d", [msg("c")]);
      await t.store.append("k:keep", [msg("stay")], { init: init() });
      expect(await t.store.delete("k:d")).toEqual({ sessions: 2, entries: 4 });
      expect(await t.store.getSession("k:d")).toBeUndefined();
      expect(await t.store.generations("k:d")).toEqual([]);
      expect((await t.store.listSessions({ includeArchived: true })).sessions.map((s) => s.key)).toEqual([
        "k:keep",
      ]);
      expect(await t.store.delete("k:d")).toEqual({ sessions: 0, entries: 0 });
      const fresh = await t.store.append("k:d", [msg("again")], { init: init() });
      expect(fresh.session.generation).toBe(1);
      expect(fresh.entries[0]!.seq).toBe(1);
    });
  });

  describe("keys are data", () => {
    it("stores keys with quotes, slashes, dots and unicode as they are", async () => {
      const keys = [
        "app_api:bob%2Fx/s1",
        "a'; DROP TABLE sessions; --",
        "../../etc/passwd",
        "用户:Алиса",
        'q"uote',
      ];
      for (const key of keys) await t.store.append(key, [msg(key)], { init: init() });
      for (const key of keys) {
        const context = (await t.store.loadContext(key))!;
        expect(context.session.key).toBe(key);
        expect(context.entries[0]).toMatchObject({ content: key });
      }
    });
  });

  describe("closing", () => {
    it("flushes on close and refuses work afterwards", async () => {
      const pending = t.store.append("k:close", [msg("last")], { init: init() });
      await t.store.close();
      await expect(pending).resolves.toMatchObject({ created: [true] });
      await expect(t.store.append("k:close", [msg("late")])).rejects.toMatchObject({ code: "STORE_CLOSED" });
      await expect(t.store.getSession("k:close")).rejects.toMatchObject({ code: "STORE_CLOSED" });
      t.store = await factory.open(t.dir);
    });
  });

  if (factory.persistent) {
    describe("persistence", () => {
      it("finds everything again after close and reopen", async () => {
        const { session } = await t.store.append("k:p", [msg("a", { idempotencyKey: "x" }), msg("b")], {
          init: init(),
        });
        await t.store.append("k:p", [{ type: "title", title: "Kept" }]);
        await t.store.updateSession("k:p", { overrides: { model: "m" } });
        await t.store.reset("k:p", "daily");
        await t.store.append("k:p", [msg("c")]);
        await t.store.close();
        t.store = await factory.open(t.dir);
        const gens = await t.store.generations("k:p");
        expect(gens.map((g) => g.generation)).toEqual([2, 1]);
        expect(gens[1]).toMatchObject({
          id: session.id,
          title: "Kept",
          overrides: { model: "m" },
          entryCount: 4,
        });
        expect((await t.store.readEntries(session.id)).map((e) => e.seq)).toEqual([1, 2, 3, 4]);
        const next = await t.store.append("k:p", [msg("d")]);
        expect(next.entries[0]!.seq).toBe(2);
      });
    });
  }
}
