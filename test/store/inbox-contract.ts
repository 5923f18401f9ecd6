import { describe, expect, it } from "vitest";
import type { Envelope } from "../../src/model/envelope.js";
import type { Inbox } from "../../src/model/inbox.js";

/** How a backend's inbox is opened for one test; `reopen` opens the same data again (none: memory). */
export interface InboxFactory {
  open(): Promise<Inbox>;
  reopen?: () => Promise<Inbox>;
}

const envelope = (text: string): Envelope => ({
  channel: "telegram",
  chat: { type: "direct", id: "42" },
  sender: { id: "42" },
  text,
});

/** The behaviour every `Inbox` implementation has (memory, SQLite, JSONL, PostgreSQL). */
export function inboxContract(name: string, factory: InboxFactory): void {
  describe(`${name} inbox (contract)`, () => {
    it("admits inputs as pending, in admission order, and is idempotent on the dedupe key", async () => {
      const inbox = await factory.open();
      const a = await inbox.admit({
        key: "telegram:42",
        envelope: envelope("one"),
        dedupeKey: "tg:1",
        at: 1,
      });
      const b = await inbox.admit({ key: "telegram:42", envelope: envelope("two"), at: 2 });
      const again = await inbox.admit({
        key: "telegram:42",
        envelope: envelope("one!"),
        dedupeKey: "tg:1",
        at: 3,
      });
      expect(a.admitted).toBe(true);
      expect(again).toEqual({ item: a.item, admitted: false });
      expect((await inbox.unfinished()).map((i) => i.envelope.text)).toEqual(["one", "two"]);
      expect(await inbox.get(b.item.id)).toMatchObject({
        state: "pending",
        admittedAt: 2,
        key: "telegram:42",
      });
      await inbox.close();
    });

    it("moves items forward only, keeps the outcome, and never reopens a finished item", async () => {
      const inbox = await factory.open();
      const { item } = await inbox.admit({ key: "k", envelope: envelope("x"), at: 1 });
      expect(await inbox.transition(item.id, "running", 2)).toBe(true);
      expect(await inbox.transition(item.id, "running", 2)).toBe(false);
      expect(await inbox.transition(item.id, "done", 3, { reply: "ok", replyId: "r1" })).toBe(true);
      expect(await inbox.transition(item.id, "failed", 4)).toBe(false);
      expect(await inbox.transition("no-such-id", "done", 4)).toBe(false);
      expect(await inbox.get(item.id)).toMatchObject({
        state: "done",
        updatedAt: 3,
        outcome: { reply: "ok" },
      });
      expect(await inbox.unfinished()).toEqual([]);
      await inbox.close();
    });

    it("prunes finished items only, and refuses calls once closed", async () => {
      const inbox = await factory.open();
      const done = (await inbox.admit({ key: "k", envelope: envelope("a"), at: 1 })).item;
      const waiting = (await inbox.admit({ key: "k", envelope: envelope("b"), at: 1 })).item;
      await inbox.transition(done.id, "cancelled", 2, { error: { code: "CANCELLED", message: "by hand" } });
      expect(await inbox.prune(10)).toBe(1);
      expect(await inbox.get(done.id)).toBeUndefined();
      expect((await inbox.unfinished()).map((i) => i.id)).toEqual([waiting.id]);
      await inbox.close();
      await expect(inbox.get(waiting.id)).rejects.toMatchObject({ code: "STORE_CLOSED" });
    });

    it("keeps an input as admitted, shared with neither the caller's envelope nor any item it hands out", async () => {
      const inbox = await factory.open();
      const input = envelope("as admitted");
      const { item } = await inbox.admit({ key: "k", envelope: input, at: 1 });
      input.text = "changed by the caller";
      item.envelope.text = "changed in the admission's item";
      const read = await inbox.get(item.id);
      if (read) read.envelope.text = "changed in a read";
      const pending = await inbox.unfinished();
      for (const i of pending) i.envelope.text = "changed in the list";
      expect((await inbox.get(item.id))?.envelope.text).toBe("as admitted");
      await inbox.transition(item.id, "done", 2, { error: { code: "X", message: "kept" } });
      expect((await inbox.get(item.id))?.envelope).toEqual(envelope("as admitted"));
      await inbox.close();
    });

    it("refuses an input that cannot be stored as JSON, storing nothing", async () => {
      const inbox = await factory.open();
      const cyclic: Record<string, unknown> = { text: "x" };
      cyclic.self = cyclic;
      const bad = { ...envelope("x"), parts: [cyclic] } as unknown as Envelope;
      await expect(inbox.admit({ key: "k", envelope: bad, at: 1 })).rejects.toMatchObject({
        code: "INVALID_ARGUMENT",
      });
      expect(await inbox.unfinished()).toEqual([]);
      await inbox.close();
    });

    if (factory.reopen) {
      const reopen = factory.reopen;
      it("keeps every admitted input and its state across a reopen", async () => {
        const inbox = await factory.open();
        const a = (await inbox.admit({ key: "k", envelope: envelope("a"), dedupeKey: "d1", at: 1 })).item;
        const b = (await inbox.admit({ key: "k", envelope: envelope("b"), at: 2 })).item;
        await inbox.transition(a.id, "done", 3, { reply: "A" });
        await inbox.transition(b.id, "running", 3);
        await inbox.close();
        const again = await reopen();
        expect((await again.unfinished()).map((i) => [i.id, i.state])).toEqual([[b.id, "running"]]);
        expect(await again.get(a.id)).toMatchObject({ state: "done", outcome: { reply: "A" } });
        expect(
          (await again.admit({ key: "k", envelope: envelope("a"), dedupeKey: "d1", at: 4 })).admitted,
        ).toBe(false);
        await again.close();
      });
    }
  });
}
