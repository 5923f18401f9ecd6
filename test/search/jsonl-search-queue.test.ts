import * as nodeFs from "node:fs";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { SearchResult } from "../../src/search/query.js";
import type { FileSystem } from "../../src/store/jsonl/durable-fs.js";
import { JsonlStore } from "../../src/store/jsonl/jsonl-store.js";
import { QUEUE_BYTES } from "../../src/store/jsonl/search-writes.js";

const init = { agent: "main", channel: "telegram", createdBy: "test" };
const user = (content: string) => ({ type: "message" as const, role: "user" as const, content });

/** node:fs, with a hook called at each fsync or fdatasync (sync or not) before it runs. */
function watchedFs(onSync: () => void): FileSystem {
  return {
    ...nodeFs,
    fsyncSync: (fd) => {
      onSync();
      nodeFs.fsyncSync(fd);
    },
    fdatasyncSync: (fd) => {
      onSync();
      nodeFs.fdatasyncSync(fd);
    },
    fdatasync: ((fd: number, callback: (error: NodeJS.ErrnoException | null) => void) => {
      onSync();
      nodeFs.fdatasync(fd, callback);
    }) as FileSystem["fdatasync"],
  };
}

/** The search's result once the index is no longer being rebuilt. */
async function settled(store: JsonlStore, text: string): Promise<SearchResult> {
  for (;;) {
    const result = await store.search({ text });
    if (!result.indexing) return result;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("the JSONL store's search index, written after the commit", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "sessiond-jsonl-search-queue-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("a batch is made durable before the index holds any of its messages, and a search finds them all after", async () => {
    let reader: Database.Database | undefined;
    let atSync: number[] | undefined;
    const store = new JsonlStore({
      path: dir,
      onProblem: () => undefined,
      fs: watchedFs(() => {
        if (atSync && reader)
          atSync.push(reader.prepare("SELECT count(*) FROM search_rows").pluck().get() as number);
      }),
    });
    await store.append("telegram:1", [user("first tern")], { init });
    expect((await store.search({ text: "tern" })).hits).toHaveLength(1);
    reader = new Database(join(dir, ".sessiond", "search.db"), { readonly: true });
    atSync = [];
    // More messages than a step of the index takes (the code before wrote them inside the commit).
    const batch = Array.from({ length: 1500 }, (_, i) => user(`message ${i} puffin${i}`));
    await store.append("telegram:1", batch);
    const seen = atSync;
    atSync = undefined;
    // The batch's fsync ran with the index as it was before the batch.
    expect(seen.length).toBeGreaterThan(0);
    expect(seen).toEqual(seen.map(() => 1));
    for (const i of [0, 999, 1000, 1499]) {
      const result = await store.search({ text: `puffin${i}` });
      expect(result.hits.map((h) => h.seq)).toEqual([i + 2]);
      expect(result).toMatchObject({ complete: true, indexing: false });
    }
    expect(reader.prepare("SELECT count(*) FROM search_rows").pluck().get()).toBe(1501);
    reader.close();
    await store.close();
  });

  it("a search right after relaxed appends writes what waits first, and finds every message", async () => {
    const store = new JsonlStore({ path: dir, durability: "relaxed", onProblem: () => undefined });
    await store.append("telegram:1", [user("start")], { init });
    const appends = Array.from({ length: 30 }, (_, s) =>
      store.append(
        `telegram:${s}`,
        Array.from({ length: 100 }, (_, i) => user(`shared gull ${s}x${i}`)),
        { init },
      ),
    );
    await Promise.all(appends);
    const result = await store.search({ text: "gull", limit: 100 });
    expect(result).toMatchObject({ complete: true, indexing: false });
    let found = result.hits.length;
    let cursor = result.nextCursor;
    while (cursor) {
      const page = await store.search({ text: "gull", limit: 100, cursor });
      found += page.hits.length;
      cursor = page.nextCursor;
    }
    expect(found).toBe(3000);
    await store.close();
  });

  it("more text than its queue holds: the sessions past it are indexed from their files, and every message is found", async () => {
    const store = new JsonlStore({ path: dir, onProblem: () => undefined });
    const big = 1024 * 1024;
    // Two messages of a million characters (2 MiB in memory) a session: more than the queue holds.
    const sessions = Math.ceil(QUEUE_BYTES / (4 * big)) + 1;
    // Appended together, so they commit in one batch and all wait at once.
    await Promise.all(
      Array.from({ length: sessions }, (_, s) =>
        store.append(
          `telegram:${s}`,
          [
            user(`${"filler ".repeat(big / 7)} kestrel${s}a`),
            user(`${"filler ".repeat(big / 7)} kestrel${s}b`),
          ],
          { init },
        ),
      ),
    );
    for (let s = 0; s < sessions; s++)
      for (const part of ["a", "b"]) {
        const result = await settled(store, `kestrel${s}${part}`);
        expect(result.hits.map((h) => `${h.key} ${h.seq}`)).toEqual([
          `telegram:${s} ${part === "a" ? 1 : 2}`,
        ]);
      }
    // The code before kept every message in memory until written; here the rebuild read some from files.
    expect(store.searchProgress().total).toBeGreaterThan(0);
    await store.close();
  }, 120_000);

  it("a rebuild step takes a slice of a long message into the FTS indexes, the rest in steps after, and search finds it throughout", async () => {
    const first = new JsonlStore({ path: dir, onProblem: () => undefined });
    const long = `${"plover ".repeat(300_000)} sandpiper`;
    await first.append("telegram:1", [user(long), user("short godwit")], { init });
    await first.close();
    rmSync(join(dir, ".sessiond", "search.db"));
    rmSync(join(dir, ".sessiond", "search.json"), { force: true });
    const atReport: Array<{ indexed: number; rows: number }> = [];
    let reader: Database.Database | undefined;
    const store = new JsonlStore({
      path: dir,
      onProblem: () => undefined,
      onIndexProgress: () => {
        reader ??= new Database(join(dir, ".sessiond", "search.db"), { readonly: true });
        atReport.push({
          indexed: reader.prepare("SELECT indexed_upto FROM search_state").pluck().get() as number,
          rows: reader.prepare("SELECT count(*) FROM search_rows").pluck().get() as number,
        });
      },
    });
    const during = await settled(store, "sandpiper");
    expect(during.hits.map((h) => h.seq)).toEqual([1]);
    // Both rows were written by the rebuild's step; the long one was not in the FTS indexes yet after it.
    expect(atReport[0]).toEqual({ indexed: 0, rows: 2 });
    for (;;) {
      const indexed = reader?.prepare("SELECT indexed_upto FROM search_state").pluck().get() as number;
      if (indexed === 2) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect((await store.search({ text: "sandpiper" })).hits.map((h) => h.seq)).toEqual([1]);
    expect((await store.search({ text: "godwit" })).hits.map((h) => h.seq)).toEqual([2]);
    reader?.close();
    await store.close();
  }, 60_000);

  it("a search with no budget writes one step of what waits (not all of it) and says it is not complete; with its budget, it finds everything", async () => {
    const store = new JsonlStore({ path: dir, durability: "relaxed", onProblem: () => undefined });
    // One batch of one session, more messages than a step takes.
    await store.append(
      "telegram:1",
      Array.from({ length: 600 }, (_, i) => user(`message ${i} avocet${i}`)),
      { init },
    );
    const first = await store.search({ text: "avocet0" }, { budgetMs: 0 });
    expect(first).toMatchObject({ complete: false, indexing: true });
    expect(first.hits.map((h) => h.seq)).toEqual([1]);
    const all = await store.search({ text: "avocet599" });
    expect(all).toMatchObject({ complete: true, indexing: false });
    expect(all.hits.map((h) => h.seq)).toEqual([600]);
    await store.close();
  });
});
