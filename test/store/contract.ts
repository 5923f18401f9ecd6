import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { EntryInput } from "../../src/model/entry.js";
import type { SessionInit } from "../../src/model/session.js";
import type { Store } from "../../src/store/store.js";
import { canUnshare, missingAcks, PID_1, reopenInChild, runAndKill } from "./crash-run.js";
import type { FaultyWriter } from "./fault-writer.js";

export interface StoreFactory {
  name: string;
  /** Opens the store kept in `dir`; opening the same dir again reopens it. */
  open(dir: string): Promise<Store>;
  /** Whether data survives close and reopen. */
  persistent: boolean;
  /** The JSON config that `crash-child.ts` opens, for stores that live in files. */
  crashConfig?: (dir: string) => unknown;
  /** Checks the files in `dir` are internally consistent after a crash; throws if not. */
  verifyFiles?: (dir: string) => void;
  /** The faults this backend can have injected; each case below runs where its capability is given. */
  faults?: StoreFaults;
}

/** Optional capabilities of a harness: ways to make the backend's disk fail under a writer. */
export interface StoreFaults {
  /** A writer on the store kept in `dir` whose fsyncs can be made to fail with EIO. */
  eio?: (dir: string) => Promise<FaultyWriter>;
  /**
   * Run after a SIGKILL of the writer: leaves the files in `dir` holding only what a power cut would
   * (what the backend had not fsync'd is gone).
   */
  powerCut?: (dir: string) => void;
}

const init = (createdBy = "u1", agent = "main", channel = "telegram"): SessionInit => ({
  agent,
  channel,
  chatType: "direct",
  createdBy,
});
const msg = (content: string, extra: Partial<EntryInput> = {}): EntryInput =>
  ({ type: "message", role: "user", content, ...extra }) as EntryInput;

export function runStoreContract(factory: StoreFactory): void {
  describe(`Store contract: ${factory.name}`, () => {
    let dir: string;
    let store: Store;

    beforeEach(async () => {
      dir = mkdtempSync(join(tmpdir(), `sessiond-${factory.name}-`));
      store = await factory.open(dir);
    });

    afterEach(async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    });

    describe("append", () => {
      it("creates the session on first append and numbers entries 1, 2, 3 with unique ULIDs", async () => {
        const first = await store.append("telegram:1", [msg("a"), msg("b")], { init: init() });
        const second = await store.append("telegram:1", [msg("c")]);
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
        const { entries, session } = await store.append("k:types", inputs, { init: init() });
        const read = await store.readEntries(session.id);
        expect(read).toEqual(entries);
        expect(read[0]).toMatchObject({ ...inputs[0], seq: 1 });
        expect(read[0]!.ts).toBe(1_700_000_000_000);
        expect(read[4]).toMatchObject({ type: "compaction", summary: "S", firstKeptSeq: 2, seq: 5 });
      });

      it("refuses a new key without init, and invalid entries, storing nothing", async () => {
        await expect(store.append("k:none", [msg("a")])).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
        await store.append("k:1", [msg("a")], { init: init() });
        const bad = { type: "message", role: "robot", content: "x" } as unknown as EntryInput;
        await expect(store.append("k:1", [msg("b"), bad])).rejects.toMatchObject({ code: "INVALID_ENTRY" });
        await expect(
          store.append("k:1", [{ type: "message", role: "user" } as unknown as EntryInput]),
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
        await expect(store.append("k:1", [compaction])).rejects.toMatchObject({ code: "INVALID_ENTRY" });
        expect((await store.getSession("k:1"))!.entryCount).toBe(1);
        expect(await store.getSession("k:none")).toBeUndefined();
      });

      it("keeps one session gap-free and in submission order under concurrent appends", async () => {
        await store.append("k:busy", [msg("0")], { init: init() });
        const results = await Promise.all(
          Array.from({ length: 300 }, (_, i) => store.append("k:busy", [msg(String(i + 1))])),
        );
        expect(results.map((r) => r.entries[0]!.seq)).toEqual(Array.from({ length: 300 }, (_, i) => i + 2));
        const session = (await store.getSession("k:busy"))!;
        const entries = await store.readEntries(session.id);
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
              store.append(key, [msg(`${key}#${j}`)], { init: init(key) }),
            ),
          ),
        );
        for (const key of keys) {
          const session = (await store.getSession(key))!;
          const entries = await store.readEntries(session.id);
          expect(entries.map((e) => e.seq)).toEqual(Array.from({ length: 15 }, (_, j) => j + 1));
          expect(entries.map((e) => (e.type === "message" ? e.content : ""))).toEqual(
            Array.from({ length: 15 }, (_, j) => `${key}#${j}`),
          );
        }
        expect((await store.listSessions({ limit: 1000 })).sessions).toHaveLength(40);
      });
    });

    describe("the caller's inputs", () => {
      it("are left as they were, and one object given twice is two entries", async () => {
        const plain = msg("plain");
        const withKey = { ...msg("keyed"), idempotencyKey: "in-1", sender: { id: "u1" } };
        const copies = [structuredClone(plain), structuredClone(withKey)];
        const { entries } = await store.append("k:inputs", [plain, withKey, plain], { init: init() });
        expect([plain, withKey]).toEqual(copies);
        expect(entries.map((e) => e.seq)).toEqual([1, 2, 3]);
        expect(new Set(entries.map((e) => e.id)).size).toBe(3);
        expect(entries[0]).not.toBe(plain);
      });
    });

    describe("failures inside a batch", () => {
      it("fails only the operation that failed; the others commit once", async () => {
        await store.append("k:b1", [msg("a")], { init: init() });
        const results = await Promise.allSettled([
          store.append("k:b1", [msg("b")]),
          store.reset("k:missing", "manual"),
          store.append("k:b2", [msg("c")], { init: init() }),
          store.updateSession("k:missing", { overrides: { model: "x" } }),
          store.append("k:b1", [msg("d")]),
        ]);
        expect(results.map((r) => r.status)).toEqual([
          "fulfilled",
          "rejected",
          "fulfilled",
          "rejected",
          "fulfilled",
        ]);
        const b1 = (await store.getSession("k:b1"))!;
        expect((await store.readEntries(b1.id)).map((e) => (e.type === "message" ? e.content : ""))).toEqual([
          "a",
          "b",
          "d",
        ]);
        expect((await store.getSession("k:b2"))!.entryCount).toBe(1);
      });
    });

    describe("idempotency", () => {
      it("returns the first entry for a repeated key and stores nothing", async () => {
        const first = await store.append("k:i", [msg("hello", { idempotencyKey: "tg-42" })], {
          init: init(),
        });
        const again = await store.append("k:i", [msg("hello (retried)", { idempotencyKey: "tg-42" })]);
        expect(again.created).toEqual([false]);
        expect(again.entries[0]).toEqual(first.entries[0]);
        expect(again.session.entryCount).toBe(1);
        const mixed = await store.append("k:i", [
          msg("new", { idempotencyKey: "tg-43" }),
          msg("dup in same call", { idempotencyKey: "tg-43" }),
          msg("dup of old", { idempotencyKey: "tg-42" }),
          msg("no key"),
        ]);
        expect(mixed.created).toEqual([true, false, false, true]);
        expect(mixed.entries.map((e) => e.seq)).toEqual([2, 2, 1, 3]);
        expect((await store.readEntries(first.session.id)).length).toBe(3);
      });

      it("stores one entry when the same key is appended concurrently", async () => {
        await store.append("k:race", [msg("start")], { init: init() });
        const results = await Promise.all(
          Array.from({ length: 20 }, () => store.append("k:race", [msg("once", { idempotencyKey: "m-1" })])),
        );
        expect(results.filter((r) => r.created[0]).length).toBe(1);
        expect(new Set(results.map((r) => r.entries[0]!.id)).size).toBe(1);
        expect((await store.getSession("k:race"))!.entryCount).toBe(2);
      });
    });

    describe("session metadata", () => {
      it("derives title, counts, tokens and last activity from entries", async () => {
        const t0 = Date.now();
        await store.append("k:m", [msg("12345678"), { type: "note", text: "n" }], {
          init: init("alice", "ops", "discord"),
        });
        await store.append("k:m", [{ type: "title", title: "A title" }]);
        const session = (await store.getSession("k:m"))!;
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
        expect(await store.getSessionById(session.id)).toEqual(session);
      });

      it("sets and removes overrides", async () => {
        await store.append("k:o", [msg("a")], { init: init() });
        await store.updateSession("k:o", { overrides: { model: "gpt-x", temperature: 0.2 } });
        const updated = await store.updateSession("k:o", { overrides: { temperature: null, verbose: true } });
        expect(updated.overrides).toEqual({ model: "gpt-x", verbose: true });
        expect((await store.getSession("k:o"))!.overrides).toEqual({ model: "gpt-x", verbose: true });
        await expect(store.updateSession("k:missing", { overrides: {} })).rejects.toMatchObject({
          code: "SESSION_NOT_FOUND",
        });
      });
    });

    describe("reading entries", () => {
      it("reads ranges by seq, limited, in either order", async () => {
        const { session } = await store.append(
          "k:r",
          Array.from({ length: 10 }, (_, i) => msg(String(i + 1))),
          { init: init() },
        );
        const seqs = async (range: Parameters<Store["readEntries"]>[1]) =>
          (await store.readEntries(session.id, range)).map((e) => e.seq);
        expect(await seqs({ afterSeq: 7 })).toEqual([8, 9, 10]);
        expect(await seqs({ beforeSeq: 4 })).toEqual([1, 2, 3]);
        expect(await seqs({ limit: 2 })).toEqual([1, 2]);
        expect(await seqs({ limit: 3, order: "desc" })).toEqual([10, 9, 8]);
        expect(await seqs({ beforeSeq: 6, limit: 2, order: "desc" })).toEqual([5, 4]);
        expect(await seqs({ afterSeq: 2, beforeSeq: 5 })).toEqual([3, 4]);
        expect(await seqs({ afterSeq: 10 })).toEqual([]);
        expect(await store.readEntries("01UNKNOWN")).toEqual([]);
        await expect(store.readEntries(session.id, { limit: 0 })).rejects.toMatchObject({
          code: "INVALID_ARGUMENT",
        });
      });
    });

    describe("context", () => {
      it("loads everything before any compaction, then only the latest summary and what it keeps", async () => {
        expect(await store.loadContext("k:c")).toBeUndefined();
        await store.append(
          "k:c",
          Array.from({ length: 6 }, (_, i) => msg(`m${i + 1}`)),
          { init: init() },
        );
        const before = (await store.loadContext("k:c"))!;
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
        await store.append("k:c", [compaction(4, 5, "first summary")]); // seq 7
        await store.append("k:c", [msg("m8")]);
        const after = (await store.loadContext("k:c"))!;
        expect(after.summary).toMatchObject({ seq: 7, summary: "first summary" });
        expect(after.entries.map((e) => e.seq)).toEqual([5, 6, 8]);
        expect(after.session).toMatchObject({ contextFromSeq: 5, lastCompactionSeq: 7 });

        await store.append("k:c", [compaction(6, 8, "second summary")]); // seq 9
        const again = (await store.loadContext("k:c"))!;
        expect(again.summary).toMatchObject({ seq: 9, summary: "second summary" });
        expect(again.entries.map((e) => e.seq)).toEqual([8]);
        // Nothing before the compaction is deleted.
        expect((await store.readEntries(after.session.id)).length).toBe(9);
      });
    });

    describe("listing", () => {
      async function seed(n: number): Promise<string[]> {
        const keys: string[] = [];
        for (let i = 0; i < n; i++) {
          const key = `k:list:${String(i).padStart(3, "0")}`;
          keys.push(key);
          await store.append(key, [msg("x")], {
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
          const page = await store.listSessions({ limit: 5, cursor });
          seen.push(...page.sessions.map((s) => s.key));
          cursor = page.nextCursor;
          pages++;
        } while (cursor);
        expect(pages).toBe(5);
        expect(seen).toEqual([...keys].reverse());
      });

      it("filters by agent, channel and activity, and sorts by activity", async () => {
        const keys = await seed(12);
        const even = await store.listSessions({ agent: "even", limit: 100 });
        expect(even.sessions.map((s) => s.key).sort()).toEqual(keys.filter((_, i) => i % 2 === 0));
        const tg = await store.listSessions({ channel: "tg", limit: 100 });
        expect(tg.sessions.map((s) => s.key).sort()).toEqual(keys.filter((_, i) => i % 3 === 0));
        const both = await store.listSessions({ channel: "tg", agent: "odd" });
        expect(both.sessions.map((s) => s.key).sort()).toEqual(["k:list:003", "k:list:009"]);

        await new Promise((r) => setTimeout(r, 5));
        const since = Date.now();
        await store.append(keys[2]!, [msg("later")]);
        const active = await store.listSessions({ activeSince: since });
        expect(active.sessions.map((s) => s.key)).toEqual([keys[2]]);
        const byActivity = await store.listSessions({ sort: "activity", limit: 2 });
        expect(byActivity.sessions[0]!.key).toBe(keys[2]);
        const next = await store.listSessions({
          sort: "activity",
          limit: 100,
          cursor: byActivity.nextCursor,
        });
        expect(next.sessions).toHaveLength(10);
        expect(next.sessions.map((s) => s.key)).not.toContain(keys[2]);
      });

      it("rejects bad limits and cursors clearly", async () => {
        await expect(store.listSessions({ limit: 0 })).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
        await expect(store.listSessions({ limit: 1001 })).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
        await expect(store.listSessions({ cursor: "garbage!" })).rejects.toMatchObject({
          code: "INVALID_ARGUMENT",
        });
        await seed(3);
        const page = await store.listSessions({ limit: 1 });
        await expect(store.listSessions({ sort: "activity", cursor: page.nextCursor })).rejects.toMatchObject(
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
            await store.append(keys[n % keys.length]!, [msg("busy")]);
            await store.append(`k:new:${n}`, [msg("new")], { init: init() });
            n++;
            // A store that answers in microtasks would otherwise starve the reader.
            await new Promise((r) => setImmediate(r));
          }
        })();
        const seen: string[] = [];
        let cursor: string | undefined;
        do {
          const page = await store.listSessions({ limit: 3, cursor });
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
        const { session: first } = await store.append("k:g", [msg("a", { idempotencyKey: "p1" }), msg("b")], {
          init: init(),
        });
        const result = await store.reset("k:g", "trigger");
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
        const again = await store.append("k:g", [msg("a", { idempotencyKey: "p1" })]);
        expect(again.created).toEqual([true]);
        expect(again.entries[0]!.seq).toBe(1);

        const gens = await store.generations("k:g");
        expect(gens.map((g) => [g.generation, g.state])).toEqual([
          [2, "active"],
          [1, "archived"],
        ]);
        expect((await store.readEntries(first.id)).map((e) => e.type)).toEqual([
          "message",
          "message",
          "reset",
        ]);
        expect((await store.loadContext("k:g"))!.entries).toHaveLength(1);

        const listed = await store.listSessions({ includeArchived: true });
        expect(listed.sessions.map((s) => s.generation).sort()).toEqual([1, 2]);
        expect((await store.listSessions()).sessions.map((s) => s.generation)).toEqual([2]);
        await expect(store.reset("k:unknown", "manual")).rejects.toMatchObject({ code: "SESSION_NOT_FOUND" });
      });
    });

    describe("writes land in the generation they were computed for", () => {
      it("an append expecting a session that is no longer current fails with SESSION_CHANGED and stores nothing", async () => {
        const { session: first } = await store.append("k:exp", [msg("a")], { init: init() });
        const ok = await store.append("k:exp", [msg("b")], { expectSessionId: first.id });
        expect(ok.entries[0]!.seq).toBe(2);

        const { current } = await store.reset("k:exp", "manual");
        await expect(
          store.append("k:exp", [msg("late reply")], { expectSessionId: first.id }),
        ).rejects.toMatchObject({
          code: "SESSION_CHANGED",
          details: { key: "k:exp", expectedSessionId: first.id },
        });
        expect((await store.getSession("k:exp"))!.entryCount).toBe(0);
        expect((await store.readEntries(first.id)).map((e) => e.seq)).toEqual([1, 2, 3]);

        // Archived with nothing after it, or deleted: the append starts no session.
        await store.archive("k:exp", "manual");
        await expect(
          store.append("k:exp", [msg("late")], { init: init(), expectSessionId: current.id }),
        ).rejects.toMatchObject({ code: "SESSION_CHANGED" });
        expect(await store.getSession("k:exp")).toBeUndefined();
        expect(await store.generations("k:exp")).toHaveLength(2);
        await store.append("k:exp2", [msg("x")], { init: init() });
        const gone = (await store.getSession("k:exp2"))!;
        await store.delete("k:exp2");
        await expect(
          store.append("k:exp2", [msg("late")], { init: init(), expectSessionId: gone.id }),
        ).rejects.toMatchObject({ code: "SESSION_CHANGED" });
        expect(await store.generations("k:exp2")).toEqual([]);
      });
    });

    describe("archive, generations and rekey", () => {
      it("archives without starting a new session; the next append starts one", async () => {
        await store.append("k:a", [msg("a")], { init: init() });
        const { archived, resetEntry } = await store.archive("k:a", "idle");
        expect(archived).toMatchObject({ state: "archived", generation: 1, entryCount: 2 });
        expect(resetEntry).toMatchObject({ type: "reset", cause: "idle", seq: 2 });
        expect(resetEntry.nextSessionId).toBeUndefined();
        expect(await store.getSession("k:a")).toBeUndefined();
        await expect(store.archive("k:a", "idle")).rejects.toMatchObject({ code: "SESSION_NOT_FOUND" });
        const next = await store.append("k:a", [msg("b")], { init: init() });
        expect(next.session.generation).toBe(2);
      });

      it("deletes one archived generation, never the current one", async () => {
        const { session: first } = await store.append("k:dg", [msg("a"), msg("b")], { init: init() });
        const { current } = await store.reset("k:dg", "manual");
        expect(await store.deleteGeneration(first.id)).toEqual({ sessions: 1, entries: 3 });
        expect((await store.generations("k:dg")).map((g) => g.id)).toEqual([current.id]);
        expect(await store.readEntries(first.id)).toEqual([]);
        await expect(store.deleteGeneration(current.id)).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
        expect(await store.deleteGeneration("01NOPE")).toEqual({ sessions: 0, entries: 0 });
      });

      it("carries a key's history over to another key that has none", async () => {
        const { session } = await store.append("discord:dm:987", [msg("from discord")], {
          init: init("987"),
        });
        expect(await store.rekey("discord:dm:987", "telegram:123")).toEqual({ moved: 1 });
        expect(await store.getSession("discord:dm:987")).toBeUndefined();
        expect(await store.generations("discord:dm:987")).toEqual([]);
        const moved = (await store.getSession("telegram:123"))!;
        expect(moved).toMatchObject({ id: session.id, key: "telegram:123", generation: 1, state: "active" });
        const next = await store.append("telegram:123", [msg("continues")]);
        expect(next.entries[0]!.seq).toBe(2);
      });

      it("keeps both histories readable when both keys have one, the target's staying current", async () => {
        const { session: a } = await store.append("old:1", [msg("old")], { init: init() });
        await store.reset("old:1", "manual");
        const { session: b } = await store.append("new:1", [msg("new")], { init: init() });
        const { session: c } = await store.append("old:1", [msg("old again")]);
        expect(await store.rekey("old:1", "new:1")).toEqual({ moved: 2 });
        const gens = await store.generations("new:1");
        // Numbered by creation: old:1's second session was started by the reset, before new:1's.
        expect(gens.map((g) => [g.id, g.generation, g.state])).toEqual([
          [b.id, 3, "active"],
          [c.id, 2, "archived"],
          [a.id, 1, "archived"],
        ]);
        const closed = await store.readEntries(c.id);
        expect(closed.at(-1)).toMatchObject({ type: "reset", cause: "relink" });
        expect((await store.getSession("new:1"))!.id).toBe(b.id);
        expect(await store.generations("old:1")).toEqual([]);
      });
    });

    describe("scans", () => {
      it("finds idle current sessions and old archived ones in time order, by prefix, page by page", async () => {
        const t0 = Date.now() - 100_000;
        for (let i = 0; i < 6; i++) {
          const key = i % 2 ? `webhook:main:alert:ts-${i}` : `telegram:${i}`;
          await store.append(key, [msg("x", { ts: t0 + i * 1000 })], { init: init() });
        }
        await store.append("telegram:fresh", [msg("now")], { init: init() });
        const idle = await store.scanSessions({ state: "active", inactiveBefore: t0 + 3500 });
        expect(idle.map((s) => s.key)).toEqual([
          "telegram:0",
          "webhook:main:alert:ts-1",
          "telegram:2",
          "webhook:main:alert:ts-3",
        ]);
        const hooks = await store.scanSessions({
          state: "active",
          inactiveBefore: Date.now() + 1,
          keyPrefix: "webhook:",
        });
        expect(hooks.map((s) => s.key)).toEqual([
          "webhook:main:alert:ts-1",
          "webhook:main:alert:ts-3",
          "webhook:main:alert:ts-5",
        ]);
        const page1 = await store.scanSessions({ state: "active", limit: 2 });
        const last = page1.at(-1)!;
        const page2 = await store.scanSessions({
          state: "active",
          limit: 10,
          after: { time: last.lastActivityAt, id: last.id },
        });
        expect([...page1, ...page2].map((s) => s.key)).toHaveLength(7);
        expect(new Set([...page1, ...page2].map((s) => s.id)).size).toBe(7);

        await store.archive("telegram:0", "idle");
        const archived = await store.scanSessions({ state: "archived", archivedBefore: Date.now() + 1 });
        expect(archived.map((s) => s.key)).toEqual(["telegram:0"]);
        expect(await store.scanSessions({ state: "archived", archivedBefore: 1 })).toEqual([]);
        await expect(store.scanSessions({ state: "active", limit: 0 })).rejects.toMatchObject({
          code: "INVALID_ARGUMENT",
        });
      });
    });

    describe("durability per append", () => {
      it("takes relaxed appends beside strict ones, and sync makes them all durable", async () => {
        await store.append("k:r1", [msg("strict")], { init: init() });
        await store.append("k:r1", [msg("relaxed")], { durability: "relaxed" });
        await store.sync();
        const session = (await store.getSession("k:r1"))!;
        expect((await store.readEntries(session.id)).map((e) => e.seq)).toEqual([1, 2]);
      });
    });

    describe("delete", () => {
      it("deletes every generation and entry of a key, and only that key", async () => {
        await store.append("k:d", [msg("a"), msg("b")], { init: init() });
        await store.reset("k:d", "manual");
        await store.append("k:d", [msg("c")]);
        await store.append("k:keep", [msg("stay")], { init: init() });
        expect(await store.delete("k:d")).toEqual({ sessions: 2, entries: 4 });
        expect(await store.getSession("k:d")).toBeUndefined();
        expect(await store.generations("k:d")).toEqual([]);
        expect((await store.listSessions({ includeArchived: true })).sessions.map((s) => s.key)).toEqual([
          "k:keep",
        ]);
        expect(await store.delete("k:d")).toEqual({ sessions: 0, entries: 0 });
        const fresh = await store.append("k:d", [msg("again")], { init: init() });
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
        for (const key of keys) await store.append(key, [msg(key)], { init: init() });
        for (const key of keys) {
          const context = (await store.loadContext(key))!;
          expect(context.session.key).toBe(key);
          expect(context.entries[0]).toMatchObject({ content: key });
        }
      });
    });

    describe("closing", () => {
      it("flushes on close and refuses work afterwards", async () => {
        const pending = store.append("k:close", [msg("last")], { init: init() });
        await store.close();
        await expect(pending).resolves.toMatchObject({ created: [true] });
        await expect(store.append("k:close", [msg("late")])).rejects.toMatchObject({ code: "STORE_CLOSED" });
        await expect(store.getSession("k:close")).rejects.toMatchObject({ code: "STORE_CLOSED" });
        store = await factory.open(dir);
      });
    });

    if (factory.persistent) {
      describe("persistence", () => {
        it("finds everything again after close and reopen", async () => {
          const { session } = await store.append("k:p", [msg("a", { idempotencyKey: "x" }), msg("b")], {
            init: init(),
          });
          await store.append("k:p", [{ type: "title", title: "Kept" }]);
          await store.updateSession("k:p", { overrides: { model: "m" } });
          await store.reset("k:p", "daily");
          await store.append("k:p", [msg("c")]);
          await store.close();
          store = await factory.open(dir);
          const gens = await store.generations("k:p");
          expect(gens.map((g) => g.generation)).toEqual([2, 1]);
          expect(gens[1]).toMatchObject({
            id: session.id,
            title: "Kept",
            overrides: { model: "m" },
            entryCount: 4,
          });
          expect((await store.readEntries(session.id)).map((e) => e.seq)).toEqual([1, 2, 3, 4]);
          const next = await store.append("k:p", [msg("d")]);
          expect(next.entries[0]!.seq).toBe(2);
        });
      });
    }

    if (factory.crashConfig) {
      const crashConfig = factory.crashConfig;
      describe("crash safety", () => {
        it("keeps every acknowledged append when the writer is killed with SIGKILL", async () => {
          await store.close();
          const acked = await runAndKill(crashConfig(dir), 3000);
          expect(acked.length).toBeGreaterThanOrEqual(3000);
          factory.verifyFiles?.(dir);
          store = await factory.open(dir);
          const byKey = new Map<string, Array<{ seq: number; id: string }>>();
          for (const a of acked) byKey.set(a.key, [...(byKey.get(a.key) ?? []), a]);
          for (const [key, acks] of byKey) {
            const session = (await store.getSession(key))!;
            const entries = await store.readEntries(session.id);
            expect(entries.map((e) => e.seq)).toEqual(
              Array.from({ length: session.entryCount }, (_, i) => i + 1),
            );
            const ids = new Map(entries.map((e) => [e.seq, e.id]));
            for (const ack of acks) expect(ids.get(ack.seq)).toBe(ack.id);
          }
          // The store takes new appends after the crash.
          const after = await store.append("crash:0", [msg("after the crash")]);
          expect(after.entries[0]!.seq).toBe((await store.getSession("crash:0"))!.entryCount);
        });

        const powerCut = factory.faults?.powerCut;
        it.runIf(powerCut)(
          "keeps every acknowledged append through a SIGKILL mid-stream and a power cut after it",
          async () => {
            await store.close();
            const acked = await runAndKill(crashConfig(dir), 3000);
            powerCut!(dir);
            const { found } = await reopenInChild(crashConfig(dir));
            expect(Object.keys(found)).toHaveLength(20);
            expect(missingAcks(acked, found)).toEqual([]);
            store = await factory.open(dir);
          },
        );

        // A container's gateway is PID 1 on every start: whatever the backend keys on the writer's PID
        // must not take the crashed writer's state for its own.
        it.runIf(canUnshare)(
          "keeps every acknowledged append when the writer ran as PID 1 and the next one runs as PID 1 too",
          async () => {
            await store.close();
            const acked = await runAndKill(crashConfig(dir), 2000, PID_1);
            expect(acked.length).toBeGreaterThanOrEqual(2000);
            factory.faults?.powerCut?.(dir);
            const { pid, found } = await reopenInChild(crashConfig(dir), PID_1);
            expect(pid).toBe(1);
            expect(missingAcks(acked, found)).toEqual([]);
            store = await factory.open(dir);
          },
          300_000,
        );
      });
    }

    const eio = factory.faults?.eio;
    if (eio) {
      describe("a failing disk (EIO from fsync)", () => {
        it("stops the store: the write's outcome is unknown, later writes are refused though fsyncs succeed again, and nothing acknowledged is lost", async () => {
          await store.close();
          const writer = await eio(dir);
          const acknowledged = await writer.append("eio:1", "acknowledged");
          expect(acknowledged.id).toBeDefined();
          writer.failFsyncs();
          // After a failed fsync the kernel may have dropped the dirty pages: the write may or may not stay.
          expect(await writer.append("eio:1", "unknown")).toEqual({
            code: "STORE_FAILED",
            outcome: "unknown",
          });
          writer.heal();
          // A later fsync that succeeds proves nothing: the store refuses every write until it is reopened.
          expect(await writer.append("eio:2", "refused")).toEqual({
            code: "STORE_FAILED",
            outcome: "not-written",
          });
          await writer.close();
          store = await factory.open(dir);
          const session = (await store.getSession("eio:1"))!;
          const entries = await store.readEntries(session.id);
          expect(entries[0]).toMatchObject({ id: acknowledged.id, seq: 1 });
          expect(entries.map((e) => e.type === "message" && e.content)).not.toContain("refused");
          expect(await store.getSession("eio:2")).toBeUndefined();
          // Reopened, the store writes again.
          expect((await store.append("eio:1", [msg("after")])).entries[0]!.seq).toBe(entries.length + 1);
        });
      });
    }
  });
}
