import { appendFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { createEngine } from "../../src/engine.js";
import { JsonlInbox } from "../../src/store/jsonl/inbox.js";
import { JsonlStore } from "../../src/store/jsonl/jsonl-store.js";
import { MemoryInbox } from "../../src/store/memory/inbox.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import { openStore } from "../../src/store/open.js";
import { SqliteInbox } from "../../src/store/sqlite/inbox.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { inboxContract } from "./inbox-contract.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A fresh folder per test, the same one for `open` and `reopen` within it. */
function perTest(): () => string {
  let current: string | undefined;
  afterEach(() => {
    current = undefined;
  });
  return () => {
    if (current === undefined) {
      current = mkdtempSync(join(tmpdir(), "sessiond-inbox-"));
      dirs.push(current);
    }
    return current;
  };
}

inboxContract("memory", { open: async () => new MemoryInbox() });
inboxContract("memory (the store's writer)", { open: async () => new MemoryStore().inbox() });

const sqliteDir = perTest();
inboxContract("sqlite", {
  open: async () => new SqliteInbox({ path: join(sqliteDir(), "sessiond.db") }),
  reopen: async () => new SqliteInbox({ path: join(sqliteDir(), "sessiond.db") }),
});

/** Stores opened for the store-connection inbox: closed after their inboxes, at the end of each test. */
const stores: SqliteStore[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
});
const sharedDir = perTest();
const storeInbox = async () => {
  const store = new SqliteStore({ path: join(sharedDir(), "sessiond.db") });
  stores.push(store);
  return store.inbox();
};
inboxContract("sqlite (the store's writer)", { open: storeInbox, reopen: storeInbox });

const jsonlDir = perTest();
const jsonlStores: JsonlStore[] = [];
afterEach(async () => {
  for (const store of jsonlStores.splice(0)) await store.close();
});
const jsonlStoreDir = perTest();
const jsonlStoreInbox = async () => {
  const store = new JsonlStore({ path: jsonlStoreDir() });
  jsonlStores.push(store);
  return store.inbox();
};
inboxContract("jsonl (the store's writer)", { open: jsonlStoreInbox, reopen: jsonlStoreInbox });

inboxContract("jsonl", {
  open: async () => new JsonlInbox({ dir: jsonlDir() }),
  reopen: async () => new JsonlInbox({ dir: jsonlDir() }),
});

const envelope = {
  channel: "web",
  chat: { type: "direct" as const, id: "a" },
  sender: { id: "a" },
  text: "hi",
};

describe("the SQLite inbox beside the store", () => {
  it("lives in the store's own database file without disturbing the store", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sessiond-inbox-"));
    dirs.push(dir);
    const path = join(dir, "sessiond.db");
    const store = await openStore({ backend: "sqlite", path });
    const inbox = new SqliteInbox({ path });
    await store.append("web:a", [{ type: "message", role: "user", content: "stored" }], {
      init: { agent: "main", channel: "web", createdBy: "test" },
    });
    const { item } = await inbox.admit({ key: "web:a", envelope, at: 1 });
    await inbox.close();
    await store.close();
    const again = await openStore({ backend: "sqlite", path });
    expect((await again.loadContext("web:a"))?.entries.map((e) => e.type === "message" && e.content)).toEqual(
      ["stored"],
    );
    await again.close();
    const reopened = new SqliteInbox({ path });
    expect((await reopened.unfinished()).map((i) => i.id)).toEqual([item.id]);
    await reopened.close();
  });
});

describe("the SQLite store's own inbox", () => {
  const open = () => {
    const dir = mkdtempSync(join(tmpdir(), "sessiond-inbox-"));
    dirs.push(dir);
    const store = new SqliteStore({ path: join(dir, "sessiond.db") });
    stores.push(store);
    return store;
  };
  it("writes through the store's writer, so the store never takes an admission for another process's write", async () => {
    const store = open();
    const inbox = store.inbox();
    store.sqlite.foreignChanges();
    const { item } = await inbox.admit({ key: "web:a", envelope, at: 1 });
    await inbox.transition(item.id, "done", 2);
    // Another process's commit would make the store drop every cached session and context.
    expect(store.sqlite.foreignChanges()).toEqual({ kind: "none" });
    const other = new Database(store.path);
    other.prepare("DELETE FROM inbox WHERE id = ?").run("nothing");
    other.prepare("UPDATE inbox SET updated_at = 3 WHERE id = ?").run(item.id);
    other.close();
    expect(store.sqlite.foreignChanges()).toEqual({ kind: "all" });
    await inbox.close();
  });

  it("is the inbox of an engine given the store, so admissions survive a restart", async () => {
    const store = open();
    const engine = await createEngine({ dataDir: dirname(store.path), store });
    expect(engine.inbox?.backend).toBe("sqlite");
    await engine.close();
  });

  it("commits the admissions of one tick together and resolves them once the store's WAL fsync is done", async () => {
    const store = open();
    const inbox = store.inbox();
    const fsyncs = (await store.sqlite.writerStats()).fsyncs;
    const admitted = await Promise.all(
      Array.from({ length: 20 }, (_, i) => inbox.admit({ key: `web:${i}`, envelope, at: i })),
    );
    expect(admitted.every((a) => a.admitted)).toBe(true);
    expect((await store.sqlite.writerStats()).fsyncs - fsyncs).toBe(1);
    expect(store.sqlite.db.prepare("SELECT count(*) FROM inbox").pluck().get()).toBe(20);
    await inbox.close();
  });
});

describe("the JSONL inbox file", () => {
  it("cuts a torn last line and skips a broken one, keeping every complete item", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sessiond-inbox-"));
    dirs.push(dir);
    const first = new JsonlInbox({ dir });
    const a = (await first.admit({ key: "k", envelope, at: 1 })).item;
    await first.close();
    appendFileSync(join(dir, "inbox.jsonl"), 'not json\n{"id":"01TORN","key":"k","envel');
    const second = new JsonlInbox({ dir });
    expect(second.skipped).toBe(1);
    expect((await second.unfinished()).map((i) => i.id)).toEqual([a.id]);
    const b = (await second.admit({ key: "k", envelope, at: 2 })).item;
    await second.close();
    const text = readFileSync(join(dir, "inbox.jsonl"), "utf8");
    expect(text.endsWith("\n")).toBe(true);
    expect(text).not.toContain("01TORN");
    const third = new JsonlInbox({ dir });
    expect((await third.unfinished()).map((i) => i.id)).toEqual([a.id, b.id]);
    await third.close();
  });

  it("rewrites the file on prune, so finished items do not pile up", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sessiond-inbox-"));
    dirs.push(dir);
    const inbox = new JsonlInbox({ dir });
    for (let i = 0; i < 5; i++) {
      const { item } = await inbox.admit({ key: "k", envelope, at: i });
      await inbox.transition(item.id, "done", i + 1);
    }
    const kept = (await inbox.admit({ key: "k", envelope, at: 10 })).item;
    expect(await inbox.prune(100)).toBe(5);
    await inbox.close();
    expect(readFileSync(join(dir, "inbox.jsonl"), "utf8").trim().split("\n")).toHaveLength(1);
    const again = new JsonlInbox({ dir });
    expect((await again.unfinished()).map((i) => i.id)).toEqual([kept.id]);
    await again.close();
  });
});
