import { describe, expect, it } from "vitest";
import type { EntryInput } from "../../model/entry.js";
import type { Store } from "../store.js";
import { type Harness, init, msg } from "./fixtures.js";

/** Appends, the caller's inputs, failures inside a batch, idempotency, session metadata, reading entries. */
export function writeCases(t: Harness): void {
  describe("append", () => {
    it("creates the session on first append and numbers entries 1, 2, 3 with unique ULIDs", async () => {
      const first = await t.store.append("telegram:1", [msg("a"), msg("b")], { init: init() });
      const second = await t.store.append("telegram:1", [msg("c")]);
      const all = [...first.entries, ...second.entries];
      expect(all.map((e) => e.seq)).toEqual([1, 2, 3]);
      expect(new Set(all.map((e) => e.id)).size).toBe(3);
      for (const e of all) expect(e.id).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
      expect(second.session).toMatchObject({
        key: "telegram:1",
        generation: 1,
        state: "active",
        entryCount: 3,
      });
      expect(second.session.id).toBe(first.session.id);
      expect(all.every((e) => e.sessionId === first.session.id)).toBe(true);
    });

    it("round-trips every entry type with its fields", async () => {
      const inputs: EntryInput[] = [
        {
          type: "message",
          role: "assistant",
          content: "héllo ✓",
          sender: { id: "bot", name: "Bot" },
          parts: [{ kind: "image", url: "https://x/y.png" }],
          toolCalls: [{ id: "c1", name: "datetime", arguments: { timezone: "UTC" } }],
          replyTo: "01ABC",
          ts: 1_700_000_000_000,
        },
        { type: "title", title: "Planning the trip", by: "offline" },
        { type: "note", text: "heads up", level: "warn", code: "X" },
        { type: "usage", model: "m", inputTokens: 10, outputTokens: 5, costUsd: 0.01 },
        {
          type: "compaction",
          summary: "S",
          fromSeq: 1,
          throughSeq: 1,
          firstKeptSeq: 2,
          tokensBefore: 100,
          tokensAfter: 10,
          summarizer: "offline",
        },
      ];
      const { entries, session } = await t.store.append("k:types", inputs, { init: init() });
      const read = await t.store.readEntries(session.id);
      expect(read).toEqual(entries);
      expect(read[0]).toMatchObject({ ...inputs[0], seq: 1 });
      expect(read[0]!.ts).toBe(1_700_000_000_000);
      expect(read[4]).toMatchObject({ type: "compaction", summary: "S", firstKeptSeq: 2, seq: 5 });
    });

    it("refuses a new key without init, and invalid entries, storing nothing", async () => {
      await expect(t.store.append("k:none", [msg("a")])).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
      await t.store.append("k:1", [msg("a")], { init: init() });
      const bad = { type: "message", role: "robot", content: "x" } as unknown as EntryInput;
      await expect(t.store.append("k:1", [msg("b"), bad])).rejects.toMatchObject({ code: "INVALID_ENTRY" });
      await expect(
        t.store.append("k:1", [{ type: "message", role: "user" } as unknown as EntryInput]),
      ).rejects.toMatchObject({ code: "INVALID_ENTRY" });
      const compaction: EntryInput = {
        type: "compaction",
        summary: "s",
        fromSeq: 1,
        throughSeq: 2,
        firstKeptSeq: 3,
        tokensBefore: 1,
        tokensAfter: 1,
        summarizer: "x",
      };
      // It would be entry 2, so it cannot summarise entry 2.
      await expect(t.store.append("k:1", [compaction])).rejects.toMatchObject({ code: "INVALID_ENTRY" });
      expect((await t.store.getSession("k:1"))!.entryCount).toBe(1);
      expect(await t.store.getSession("k:none")).toBeUndefined();
    });

    it("keeps one session gap-free and in submission order under concurrent appends", async () => {
      await t.store.append("k:busy", [msg("0")], { init: init() });
      const results = await Promise.all(
        Array.from({ length: 300 }, (_, i) => t.store.append("k:busy", [msg(String(i + 1))])),
      );
      expect(results.map((r) => r.entries[0]!.seq)).toEqual(Array.from({ length: 300 }, (_, i) => i + 2));
      const session = (await t.store.getSession("k:busy"))!;
      const entries = await t.store.readEntries(session.id);
      expect(entries.map((e) => e.seq)).toEqual(Array.from({ length: 301 }, (_, i) => i + 1));
      expect(entries.map((e) => (e.type === "message" ? e.content : ""))).toEqual(
        Array.from({ length: 301 }, (_, i) => String(i)),
      );
      expect(session.entryCount).toBe(301);
      expect(session.messageCount).toBe(301);
    });

    it("keeps many sessions gap-free under concurrent appends", async () => {
      const keys = Array.from({ length: 40 }, (_, i) => `k:many:${i}`);
      await Promise.all(
        keys.flatMap((key) =>
          Array.from({ length: 15 }, (_, j) =>
            t.store.append(key, [msg(`${key}#${j}`)], { init: init(key) }),
          ),
        ),
      );
      for (const key of keys) {
        const session = (await t.store.getSession(key))!;
        const entries = await t.store.readEntries(session.id);
        expect(entries.map((e) => e.seq)).toEqual(Array.from({ length: 15 }, (_, j) => j + 1));
        expect(entries.map((e) => (e.type === "message" ? e.content : ""))).toEqual(
          Array.from({ length: 15 }, (_, j) => `${key}#${j}`),
        );
      }
      expect((await t.store.listSessions({ limit: 1000 })).sessions).toHaveLength(40);
    });
  });

  describe("the caller's inputs", () => {
    it("are left as they were, and one object given twice is two entries", async () => {
      const plain = msg("plain");
      const withKey = { ...msg("keyed"), idempotencyKey: "in-1", sender: { id: "u1" } };
      const copies = [structuredClone(plain), structuredClone(withKey)];
      const { entries } = await t.store.append("k:inputs", [plain, withKey, plain], { init: init() });
      expect([plain, withKey]).toEqual(copies);
      expect(entries.map((e) => e.seq)).toEqual([1, 2, 3]);
      expect(new Set(entries.map((e) => e.id)).size).toBe(3);
      expect(entries[0]).not.toBe(plain);
    });
  });

  describe("failures inside a batch", () => {
    it("fails only the operation that failed; the others commit once", async () => {
      await t.store.append("k:b1", [msg("a")], { init: init() });
      const results = await Promise.allSettled([
        t.store.append("k:b1", [msg("b")]),
        t.store.reset("k:missing", "manual"),
        t.store.append("k:b2", [msg("c")], { init: init() }),
        t.store.updateSession("k:missing", { overrides: { model: "x" } }),
        t.store.append("k:b1", [msg("d")]),
      ]);
      expect(results.map((r) => r.status)).toEqual([
        "fulfilled",
        "rejected",
        "fulfilled",
        "rejected",
        "fulfilled",
      ]);
      const b1 = (await t.store.getSession("k:b1"))!;
      expect((await t.store.readEntries(b1.id)).map((e) => (e.type === "message" ? e.content : ""))).toEqual([
        "a",
        "b",
        "d",
      ]);
      expect((await t.store.getSession("k:b2"))!.entryCount).toBe(1);
    });
  });

  describe("idempotency", () => {
    it("returns the first entry for a repeated key and stores nothing", async () => {
      const first = await t.store.append("k:i", [msg("hello", { idempotencyKey: "tg-42" })], {
        init: init(),
      });
      const again = await t.store.append("k:i", [msg("hello (retried)", { idempotencyKey: "tg-42" })]);
      expect(again.created).toEqual([false]);
      expect(again.entries[0]).toEqual(first.entries[0]);
      expect(again.session.entryCount).toBe(1);
      const mixed = await t.store.append("k:i", [
        msg("new", { idempotencyKey: "tg-43" }),
        msg("dup in same call", { idempotencyKey: "tg-43" }),
        msg("dup of old", { idempotencyKey: "tg-42" }),
        msg("no key"),
      ]);
      expect(mixed.created).toEqual([true, false, false, true]);
      expect(mixed.entries.map((e) => e.seq)).toEqual([2, 2, 1, 3]);
      expect((await t.store.readEntries(first.session.id)).length).toBe(3);
    });

    it("stores one entry when the same key is appended concurrently", async () => {
      await t.store.append("k:race", [msg("start")], { init: init() });
      const results = await Promise.all(
        Array.from({ length: 20 }, () => t.store.append("k:race", [msg("once", { idempotencyKey: "m-1" })])),
      );
      expect(results.filter((r) => r.created[0]).length).toBe(1);
      expect(new Set(results.map((r) => r.entries[0]!.id)).size).toBe(1);
      expect((await t.store.getSession("k:race"))!.entryCount).toBe(2);
    });
  });

  describe("session metadata", () => {
    it("derives title, counts, tokens and last activity from entries", async () => {
      const t0 = Date.now();
      await t.store.append("k:m", [msg("12345678"), { type: "note", text: "n" }], {
        init: init("alice", "ops", "discord"),
      });
      await t.store.append("k:m", [{ type: "title", title: "A title" }]);
      const session = (await t.store.getSession("k:m"))!;
      expect(session).toMatchObject({
        agent: "ops",
        channel: "discord",
        chatType: "direct",
        createdBy: "alice",
        title: "A title",
        entryCount: 3,
        messageCount: 1,
        approxTokens: 2,
      });
      expect(session.lastActivityAt).toBeGreaterThanOrEqual(t0);
      expect(session.createdAt).toBeGreaterThanOrEqual(t0);
      expect(await t.store.getSessionById(session.id)).toEqual(session);
    });

    it("sets and removes overrides", async () => {
      await t.store.append("k:o", [msg("a")], { init: init() });
      await t.store.updateSession("k:o", { overrides: { model: "gpt-x", temperature: 0.2 } });
      const updated = await t.store.updateSession("k:o", { overrides: { temperature: null, verbose: true } });
      expect(updated.overrides).toEqual({ model: "gpt-x", verbose: true });
      expect((await t.store.getSession("k:o"))!.overrides).toEqual({ model: "gpt-x", verbose: true });
      await expect(t.store.updateSession("k:missing", { overrides: {} })).rejects.toMatchObject({
        code: "SESSION_NOT_FOUND",
      });
    });
  });

  describe("reading entries", () => {
    it("reads ranges by seq, limited, in either order", async () => {
      const { session } = await t.store.append(
        "k:r",
        Array.from({ length: 10 }, (_, i) => msg(String(i + 1))),
        { init: init() },
      );
      const seqs = async (range: Parameters<Store["readEntries"]>[1]) =>
        (await t.store.readEntries(session.id, range)).map((e) => e.seq);
      expect(await seqs({ afterSeq: 7 })).toEqual([8, 9, 10]);
      expect(await seqs({ beforeSeq: 4 })).toEqual([1, 2, 3]);
      expect(await seqs({ limit: 2 })).toEqual([1, 2]);
      expect(await seqs({ limit: 3, order: "desc" })).toEqual([10, 9, 8]);
      expect(await seqs({ beforeSeq: 6, limit: 2, order: "desc" })).toEqual([5, 4]);
      expect(await seqs({ afterSeq: 2, beforeSeq: 5 })).toEqual([3, 4]);
      expect(await seqs({ afterSeq: 10 })).toEqual([]);
      expect(await t.store.readEntries("01UNKNOWN")).toEqual([]);
      await expect(t.store.readEntries(session.id, { limit: 0 })).rejects.toMatchObject({
        code: "INVALID_ARGUMENT",
      });
    });
  });
}
