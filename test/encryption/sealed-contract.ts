import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import type { EntryInput } from "../../src/model/entry.js";
import { isSessiondError } from "../../src/model/errors.js";
import { open as openEnvelope } from "../../src/store/encryption/envelope.js";
import type { UnreadableEntry } from "../../src/store/encryption/sealing-driver.js";
import type { StoreEncryption } from "../../src/store/encryption/store-encryption.js";
import type { Store } from "../../src/store/store.js";
import type { StoreInbox } from "../../src/store/store-inbox.js";
import { uniqueWord } from "../erasure/byte-scan.js";

export const init = { agent: "main", channel: "t", createdBy: "u" };
export const msg = (content: string): EntryInput => ({ type: "message", role: "user", content });

/** What the contract needs of one backend; each test gets a fresh, empty place to store. */
export interface SealedHarness {
  fresh(): Promise<void> | void;
  open(encryption?: StoreEncryption): Promise<Store>;
  /** Where the stored bytes (files, rows) hold `word`, with the store closed or open. */
  holding(word: string): Promise<string[]>;
  /** The stored form of one entry's body, and the session's wrapped data key (undefined: none stored). */
  stored(sessionId: string, seq: number): Promise<{ body: string | undefined; dataKey: string | undefined }>;
  /** Changes one character of an entry's sealed body, with the store closed. */
  damage(sessionId: string, seq: number): Promise<void>;
  /** Every wrapped data key stored, by session id. */
  dataKeys(): Promise<Array<{ id: string; dataKey: string }>>;
  /** A fingerprint of everything stored (to show that an open that was refused rewrote nothing). */
  fingerprint(): Promise<string>;
  /** After a delete: what the backend does so freed space keeps nothing (SQLite: the erasure scrub). */
  afterDelete?(store: Store, key: string): Promise<void>;
  /** Whether the store keeps an inbox of its own (each of the three does). */
  sealsInbox: boolean;
  cleanup(): Promise<void> | void;
}

export function sealedStoreContract(name: string, harness: SealedHarness): void {
  describe(`encryption at rest: ${name}`, () => {
    const key = randomBytes(32);
    const opened: Store[] = [];
    const open = async (encryption?: StoreEncryption) => {
      const store = await harness.open(encryption);
      opened.push(store);
      return store;
    };
    const closeAll = async () => {
      for (const store of opened.splice(0)) await store.close();
    };
    afterEach(async () => {
      await closeAll();
      await harness.cleanup();
    });

    it("stores no byte of a message or title in clear, and reads them back in clear", async () => {
      await harness.fresh();
      const word = uniqueWord("secret");
      const titleWord = uniqueWord("title");
      const store = await open({ key });
      const many = Array.from({ length: 20 }, (_, i) => msg(`${word} number ${i}`));
      await store.append("k", [...many, { type: "title", title: titleWord }], { init });
      await store.append("k", [
        {
          type: "compaction",
          summary: `summary ${word}`,
          fromSeq: 1,
          throughSeq: 10,
          firstKeptSeq: 11,
          tokensBefore: 1,
          tokensAfter: 1,
          summarizer: "t",
        },
      ]);
      // Open: the WAL (or journal) holds the appends.
      expect(await harness.holding(word)).toEqual([]);
      expect(await harness.holding(titleWord)).toEqual([]);
      const session = await store.getSession("k");
      expect(session?.title).toBe(titleWord);
      expect(JSON.stringify(session)).not.toContain("dataKey");
      await closeAll();
      expect(await harness.holding(word)).toEqual([]);
      expect(await harness.holding(titleWord)).toEqual([]);

      const again = await open({ key });
      const entries = await again.readEntries(session!.id);
      expect(entries).toHaveLength(22);
      expect(entries[0]).toMatchObject({
        type: "message",
        role: "user",
        content: `${word} number 0`,
        seq: 1,
      });
      expect(entries[20]).toMatchObject({ type: "title", title: titleWord });
      const context = await again.loadContext("k");
      expect(context?.summary?.summary).toBe(`summary ${word}`);
      expect(context?.entries.map((e) => e.seq)).toEqual([11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21]);
      expect((await again.getSession("k"))?.title).toBe(titleWord);
      const listed = await again.listSessions({});
      expect(listed.sessions[0]?.title).toBe(titleWord);

      // A reset archives the generation: its entries stay sealed and readable, the next one gets its own key.
      await again.reset("k", "manual", init);
      await again.append("k", [msg(`after ${word}`)]);
      await again.flush();
      expect(await harness.holding(word)).toEqual([]);
      expect((await again.readEntries(session!.id))[0]).toMatchObject({ content: `${word} number 0` });
      const current = await again.getSession("k");
      expect(current?.id).not.toBe(session!.id);
      expect((await again.readEntries(current!.id))[0]).toMatchObject({ content: `after ${word}` });
      expect((await harness.stored(current!.id, 1)).dataKey).not.toBe(
        (await harness.stored(session!.id, 1)).dataKey,
      );
    });

    it("reads a damaged envelope in the middle of a history as an ENTRY_UNREADABLE note, and the rest", async () => {
      await harness.fresh();
      const problems: UnreadableEntry[] = [];
      const store = await open({ key });
      const { session } = await store.append(
        "k",
        [1, 2, 3, 4, 5].map((i) => msg(`line ${i}`)),
        { init },
      );
      await closeAll();
      await harness.damage(session.id, 3);
      const again = await open({ key, onUnreadable: (p) => problems.push(p) });
      const entries = await again.readEntries(session.id);
      expect(entries.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5]);
      expect(entries[2]).toMatchObject({ type: "note", code: "ENTRY_UNREADABLE", level: "error", seq: 3 });
      expect(
        entries.filter((e) => e.type === "message").map((e) => (e.type === "message" ? e.content : "")),
      ).toEqual(["line 1", "line 2", "line 4", "line 5"]);
      await again.readEntries(session.id);
      expect(problems).toEqual([expect.objectContaining({ sessionId: session.id, seq: 3 })]);
      // The store goes on: an append after the damage reads back.
      await again.append("k", [msg("line 6")]);
      expect((await again.readEntries(session.id)).at(-1)).toMatchObject({ content: "line 6" });
    });

    it("refuses a sealed store opened without its key, or with another, and rewrites nothing", async () => {
      await harness.fresh();
      const store = await open({ key });
      await store.append("k", [msg("hello")], { init });
      await closeAll();
      const before = await harness.fingerprint();
      for (const encryption of [undefined, { key: randomBytes(32) }]) {
        const error = await harness.open(encryption).then(
          async (s) => {
            // A backend that finds out on the first read: that read is refused.
            try {
              await s.readEntries((await s.getSession("k"))!.id);
              return undefined;
            } catch (e) {
              return e;
            } finally {
              await s.close();
            }
          },
          (e: unknown) => e,
        );
        expect(isSessiondError(error) && error.code).toBe("STORE_CORRUPT");
        expect(String((error as Error).message)).toMatch(encryption ? /another key/ : /sealed/);
      }
      expect(await harness.fingerprint()).toBe(before);
      const again = await open({ key });
      expect((await again.readEntries((await again.getSession("k"))!.id))[0]).toMatchObject({
        content: "hello",
      });
    });

    it("reads a fork's inherited entries, sealed with its origin's key", async () => {
      await harness.fresh();
      const store = await open({ key });
      await store.append("a", [msg("one"), msg("two"), msg("three")], { init });
      const fork = await store.fork("a", { toKey: "b", atSeq: 2 });
      await store.append("b", [msg("fork's own")]);
      await closeAll();
      const again = await open({ key });
      const entries = await again.readEntries(fork.session.id);
      expect(entries.map((e) => (e.type === "message" ? e.content : e.type))).toEqual([
        "one",
        "two",
        "fork's own",
      ]);
      expect((await again.loadContext("b"))?.entries.map((e) => e.seq)).toEqual([1, 2, 3]);
    });

    it.runIf(harness.sealsInbox)(
      "seals inbox rows (the input as received, the reply) and reads them back",
      async () => {
        await harness.fresh();
        const word = uniqueWord("inbox");
        const store = await open({ key });
        const inbox = (store as unknown as { inbox(): StoreInbox }).inbox();
        const envelope = {
          channel: "web",
          chat: { type: "direct" as const, id: "1" },
          sender: { id: "1" },
          text: word,
        };
        const { item } = await inbox.admit({ key: "web:1", envelope, dedupeKey: "m-1", at: 1 });
        await inbox.transition(item.id, "running", 2);
        await inbox.transition(item.id, "done", 3, { reply: `reply ${word}`, sessionId: "s" });
        await store.flush();
        expect(await harness.holding(word)).toEqual([]);
        await closeAll();
        expect(await harness.holding(word)).toEqual([]);
        const again = await open({ key });
        const read = await (again as unknown as { inbox(): StoreInbox }).inbox().get(item.id);
        expect(read).toMatchObject({ state: "done", dedupeKey: "m-1", envelope: { text: word } });
        expect(read?.outcome).toMatchObject({ reply: `reply ${word}` });
      },
    );

    it("destroys a session's data key with the session (crypto-shredding)", async () => {
      await harness.fresh();
      const store = await open({ key });
      const { session } = await store.append("gone", [msg("shred me")], { init });
      await store.append("kept", [msg("keep me")], { init });
      await store.flush();
      const stored = await harness.stored(session.id, 1);
      expect(stored.body).toBeDefined();
      expect(stored.dataKey).toBeDefined();
      await store.delete("gone");
      await harness.afterDelete?.(store, "gone");
      await closeAll();
      // No key the store holds opens the body any more, and the wrapped key is nowhere in the stored bytes.
      const keys = await harness.dataKeys();
      expect(keys.map((k) => k.id)).not.toContain(session.id);
      const sealed = (JSON.parse(stored.body!) as { sealed: string }).sealed;
      for (const k of keys) {
        const dek = openEnvelope(key, k.dataKey, `dek/${k.id}`);
        expect(dek).toBeDefined();
        expect(openEnvelope(dek!, sealed, `entry/${session.id}/1`)).toBeUndefined();
      }
      // The right data key (unwrapped while it existed) still opens it: the shredding is the key's.
      const dek = openEnvelope(key, stored.dataKey!, `dek/${session.id}`)!;
      expect(openEnvelope(dek, sealed, `entry/${session.id}/1`)?.toString()).toContain("shred me");
      expect(await harness.holding(stored.dataKey!.slice(0, 24))).toEqual([]);
    });
  });
}
