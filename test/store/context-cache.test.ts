import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Entry, EntryInput } from "../../src/model/entry.js";
import type { Session } from "../../src/model/session.js";
import { ContextCache } from "../../src/store/context-cache.js";
import { JsonlStore } from "../../src/store/jsonl/jsonl-store.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import type { Store } from "../../src/store/store.js";

const init = { agent: "main", channel: "t", createdBy: "u" };
const msg = (content: string): EntryInput => ({
  type: "message",
  role: "user",
  content,
  sender: { id: "u" },
});

/** Changes a value the way careless code would, without throwing where it is frozen (Reflect.set says false). */
function scribble(entry: Entry): void {
  Reflect.set(entry, "content", "scribbled");
  const sender = Reflect.get(entry, "sender") as object | undefined;
  if (sender) Reflect.set(sender, "id", "scribbled");
}

describe("context cache: immutable entries", () => {
  let dir: string;
  const opened: Store[] = [];
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "sessiond-context-cache-"));
  });
  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const stores: Array<[string, () => Store]> = [
    ["sqlite", () => new SqliteStore({ path: join(dir, "sessiond.db") })],
    ["memory", () => new MemoryStore()],
    ["jsonl", () => new JsonlStore({ path: join(dir, "jsonl") })],
  ];

  for (const [name, make] of stores) {
    it(`${name}: changing what loadContext or append returned does not change the next load`, async () => {
      const store = make();
      opened.push(store);
      const appended = await store.append("k", [msg("one")], { init });
      // The entries append handed back are the caller's: scribbling on them leaves the stored ones alone.
      for (const entry of appended.entries) scribble(entry);
      const first = (await store.loadContext("k"))!;
      expect(first.entries.map((e) => e.type === "message" && e.content)).toEqual(["one"]);
      // A load read from the store (not the cache) hands out entries nothing can change either.
      for (const entry of first.entries) scribble(entry as Entry);
      expect((await store.readEntries(first.session.id))[0]).toMatchObject({ content: "one" });
      // A load answered from the cache: its entries cannot be changed, and the next load is unchanged.
      const second = (await store.loadContext("k"))!;
      for (const entry of second.entries) scribble(entry as Entry);
      expect(Object.isFrozen(second.entries[0])).toBe(true);
      const third = (await store.loadContext("k"))!;
      expect(third.entries[0]).toMatchObject({ content: "one", sender: { id: "u" } });
      // The array is the caller's own.
      third.entries.push(third.entries[0]!);
      expect((await store.loadContext("k"))!.entries).toHaveLength(1);
    });
  }

  it("jsonl: entries read from the file are shared by its cache and the context cache, and cannot be changed", async () => {
    const path = join(dir, "jsonl-reopen");
    const writer = new JsonlStore({ path });
    await writer.append("k", [msg("one"), msg("two")], { init });
    await writer.close();
    const store = new JsonlStore({ path });
    opened.push(store);
    const first = (await store.loadContext("k"))!;
    expect(Object.isFrozen(first.entries[0])).toBe(true);
    for (const entry of first.entries) scribble(entry as Entry);
    const read = await store.readEntries(first.session.id);
    expect(read.map((e) => e.type === "message" && e.content)).toEqual(["one", "two"]);
    // One frozen entry serves both caches: the cached load hands out the very objects the driver read.
    const second = (await store.loadContext("k"))!;
    expect(second.entries[0]).toBe(read[0]);
    expect(second.entries[0]).toMatchObject({ content: "one", sender: { id: "u" } });
  });
  it("sqlite: entries read from the database are frozen where they are, and the cached load hands out the same ones", async () => {
    const path = join(dir, "sqlite-reopen.db");
    const writer = new SqliteStore({ path });
    await writer.append("k", [msg("one"), msg("two"), msg("three")], { init });
    await writer.append("k", [
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
    ]);
    await writer.close();
    const store = new SqliteStore({ path });
    opened.push(store);
    // A load the cache could not answer: the entries come from the database.
    const first = (await store.loadContext("k"))!;
    expect(first.entries.map((e) => e.type === "message" && e.content)).toEqual(["two", "three"]);
    expect(first.entries.every((e) => Object.isFrozen(e) && Object.isFrozen(Reflect.get(e, "sender")))).toBe(
      true,
    );
    expect(Object.isFrozen(first.summary)).toBe(true);
    for (const entry of first.entries) scribble(entry as Entry);
    // The cache keeps those very objects rather than copies of them.
    const second = (await store.loadContext("k"))!;
    expect(second.entries[0]).toBe(first.entries[0]);
    expect(second.summary).toBe(first.summary);
    expect(second.entries[0]).toMatchObject({ content: "two", sender: { id: "u" } });
  });
});

describe("context cache: bounded by bytes", () => {
  const session = (entryCount: number): Session =>
    ({ entryCount, contextFromSeq: 1, lastCompactionSeq: undefined }) as unknown as Session;
  const big = (seq: number, bytes: number): Entry =>
    ({
      type: "message",
      role: "user",
      content: "x".repeat(bytes),
      id: `id-${seq}`,
      sessionId: "s",
      seq,
      ts: 0,
    }) as Entry;

  it("holds at most its bound in bytes, evicting the least recently used sessions", () => {
    const bound = 8 * 1024 * 1024;
    const cache = new ContextCache(bound);
    for (let i = 0; i < 40; i++) {
      cache.put(`k${i}`, i, session(1), { entries: [big(1, 900_000)] });
      expect(cache.bytes).toBeLessThanOrEqual(bound);
    }
    expect(cache.bytes).toBeGreaterThan(bound / 2);
    expect(cache.get("k0", 0, session(1))).toBeUndefined();
    expect(cache.get("k39", 39, session(1))?.entries).toHaveLength(1);
  });

  it("counts appended entries, and drops a session whose context outgrows a quarter of the bound", () => {
    const cache = new ContextCache(4 * 1024 * 1024);
    cache.put("k", 1, session(1), { entries: [big(1, 500_000)] });
    const before = cache.bytes;
    cache.appended("k", 1, session(2), [big(2, 400_000)]);
    expect(cache.bytes - before).toBeGreaterThanOrEqual(400_000);
    expect(cache.get("k", 1, session(2))?.entries).toHaveLength(2);
    cache.appended("k", 1, session(3), [big(3, 400_000)]);
    expect(cache.get("k", 1, session(3))).toBeUndefined();
    expect(cache.bytes).toBe(0);
  });

  it("counts text beyond Latin-1 at two bytes a character", () => {
    const cache = new ContextCache(64 * 1024 * 1024);
    cache.put("a", 1, session(1), { entries: [big(1, 100_000)] });
    const latin = cache.bytes;
    const wide = { ...big(1, 0), content: "€".repeat(100_000) } as Entry;
    cache.put("b", 2, session(1), { entries: [wide] });
    expect(cache.bytes - latin).toBeGreaterThanOrEqual(200_000);
  });
});
