import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { EntryInput } from "../../src/model/entry.js";
import { SQL, SqliteStore } from "../../src/store/sqlite/sqlite-store.js";

const init = { agent: "main", channel: "t", createdBy: "u" };
const msg = (content: string): EntryInput => ({ type: "message", role: "user", content });

describe("SQLite store", () => {
  let dir: string;
  let path: string;
  const opened: SqliteStore[] = [];
  const open = (options: Partial<ConstructorParameters<typeof SqliteStore>[0]> = {}) => {
    const store = new SqliteStore({ path, ...options });
    opened.push(store);
    return store;
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "sessiond-sqlite-"));
    path = join(dir, "nested", "sessiond.db");
  });
  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("uses WAL, and synchronous FULL when strict, NORMAL when relaxed", async () => {
    await open().close();
    const strict = new Database(path);
    expect(strict.pragma("journal_mode", { simple: true })).toBe("wal");
    strict.close();
    const pragmaOf = (store: SqliteStore) =>
      (store as unknown as { db: Database.Database }).db.pragma("synchronous", { simple: true });
    expect(pragmaOf(open())).toBe(2);
    expect(pragmaOf(open({ durability: "relaxed" }))).toBe(1);
  });

  it("loads context by key ranges on (sid, seq) in both tables, never a scan of the session's history", () => {
    open();
    const db = new Database(path, { readonly: true });
    const plan = db.prepare(`EXPLAIN QUERY PLAN ${SQL.kept}`).all({ sid: 1, from: 1 }) as Array<{
      detail: string;
    }>;
    db.close();
    const detail = plan.map((p) => p.detail).join(" | ");
    // Both tables are read by index range and merged in seq order: no sort, no scan.
    expect(detail).toMatch(/MERGE \(UNION ALL\)/);
    expect(detail).toMatch(/SEARCH entries USING PRIMARY KEY \(sid=\? AND seq>\?\)/);
    expect(detail).toMatch(/SEARCH journal USING INDEX journal_seq \(sid=\? AND seq>\?\)/);
  });

  it("batches appends from many sessions into few transactions", async () => {
    const store = open();
    await Promise.all(Array.from({ length: 200 }, (_, i) => store.append(`k${i}`, [msg("x")], init)));
    const sizes = store.recentBatchSizes();
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(200);
    expect(sizes.length).toBeLessThan(10);
  });

  it("keeps seq gap-free when two connections write the same key in turn", async () => {
    const a = open();
    const b = open();
    for (let i = 0; i < 10; i++) {
      await a.append("shared", [msg(`a${i}`)], init);
      await b.append("shared", [msg(`b${i}`)], init);
    }
    const session = (await a.getSession("shared"))!;
    const entries = await b.readEntries(session.id);
    expect(entries.map((e) => e.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(session.entryCount).toBe(20);
  });

  it("fails appends clearly while another process holds the write lock, loses nothing, and recovers", async () => {
    const store = open({ busyTimeoutMs: 50 });
    await store.append("k", [msg("before")], init);
    const other = new Database(path);
    other.exec("BEGIN IMMEDIATE");
    await expect(store.append("k", [msg("blocked")])).rejects.toMatchObject({ code: "STORE_UNAVAILABLE" });
    other.exec("ROLLBACK");
    other.close();
    const after = await store.append("k", [msg("after")]);
    expect(after.entries[0]!.seq).toBe(2);
    const session = (await store.getSession("k"))!;
    expect((await store.readEntries(session.id)).map((e) => e.type === "message" && e.content)).toEqual([
      "before",
      "after",
    ]);
  });

  it("refuses a file that is not a database with STORE_CORRUPT, naming the file", () => {
    const bad = join(dir, "bad.db");
    writeFileSync(
      bad,
      "this is not a database, just some bytes that are long enough to have a header ".repeat(20),
    );
    expect(() => new SqliteStore({ path: bad })).toThrowError(
      expect.objectContaining({ code: "STORE_CORRUPT", message: expect.stringContaining(bad) }),
    );
  });
});
