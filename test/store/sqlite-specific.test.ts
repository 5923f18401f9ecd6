import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { EntryInput } from "../../src/model/entry.js";
import { SQL, SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { fsyncFaultEnv } from "../support/fsync-faults.js";

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

  it("uses WAL and synchronous NORMAL; a strict commit is acknowledged only after an fsync of the WAL", async () => {
    await open().close();
    const check = new Database(path);
    expect(check.pragma("journal_mode", { simple: true })).toBe("wal");
    check.close();
    const fsyncs = async (store: SqliteStore) => (await store.sqlite.writerStats()).fsyncs;
    const strict = open();
    expect(strict.sqlite.threaded).toBe(true);
    expect(strict.sqlite.db.pragma("synchronous", { simple: true })).toBe(1);
    await strict.append("k", [msg("one")], { init });
    expect(await fsyncs(strict)).toBe(1);
    await Promise.all([
      strict.append("a", [msg("two")], { init }),
      strict.append("b", [msg("three")], { init }),
    ]);
    expect(await fsyncs(strict)).toBe(2);

    const relaxed = open({ durability: "relaxed" });
    await relaxed.append("k", [msg("four")], { init });
    expect(await fsyncs(relaxed)).toBe(0);
    await relaxed.append("k", [msg("five")], { init: init, durability: "strict" });
    expect(await fsyncs(relaxed)).toBe(1);
  });

  it("checkpoints the WAL on a thread of its own while appends go on, and stops it on close", async () => {
    const store = open();
    const checkpoints = async () => (await store.sqlite.writerStats()).checkpoints;
    for (let i = 0; (await checkpoints()) === 0; i++) {
      await Promise.all(
        Array.from({ length: 20 }, (_, j) => store.append(`k${j}`, [msg(`m${i}`)], { init })),
      );
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await store.close();
    // Everything appended is in the file, whatever the checkpoints copied.
    const reopened = open();
    expect((await reopened.getSession("k0"))!.messageCount).toBeGreaterThan(0);
    const db = new Database(path);
    expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
    db.close();
  });

  it("starts the WAL over once it holds about 8 MB, so that commits overwrite it instead of growing the file", async () => {
    const store = open({ durability: "relaxed" });
    // Each of these commits writes about three pages: 3,000 of them would make a WAL of some 36 MB.
    for (let i = 0; i < 3000; i++) await store.append("k", [msg(`message ${i}`)], { init });
    expect(statSync(`${path}-wal`).size).toBeLessThan(12 * 1024 * 1024);
    expect((await store.getSession("k"))!.entryCount).toBe(3000);
  });

  it("starts the WAL over under continuous load too, while the checkpoint thread copies beside the writer", async () => {
    // The checkpoint thread starts again as soon as it is done, as it does when its checkpoints take longer
    // than its interval (a loaded disk), and eight writers that never pause commit on every tick beside it.
    const store = open({ durability: "relaxed", checkpointIntervalMs: 0 });
    const body = "x".repeat(2_000);
    await Promise.all(
      Array.from({ length: 8 }, async (_, w) => {
        for (let i = 0; i < 600; i++) await store.append(`k${w}`, [msg(`${body} ${i}`)], { init });
      }),
    );
    expect(statSync(`${path}-wal`).size).toBeLessThan(12 * 1024 * 1024);
    expect((await store.getSession("k7"))!.entryCount).toBe(600);
  });

  it("keeps the WAL under its bound on a slow disk, where each checkpoint holds the writer's own off for long", async () => {
    // Every fsync of the database file takes 0.7 s: the thread's checkpoints hold the checkpoint lock that
    // long, during which the writer's own checkpoints are turned away as busy. Before the writer waited for
    // them, the WAL reached 12.3-23 MB here; now it stops at its 10 MiB limit plus a commit or two.
    const file = join(dir, "slow.db");
    const env = fsyncFaultEnv(file, join(dir, "slow-fsyncs"), 700);
    const child = new URL("./sqlite-slow-disk-child.ts", import.meta.url).pathname;
    const out = await new Promise<string>((resolve, reject) =>
      execFile(
        process.execPath,
        ["--import", "tsx", child, file, join(dir, "slow-fsyncs")],
        { env },
        (error, stdout, stderr) =>
          error ? reject(new Error(`${error.message}: ${stderr}`)) : resolve(stdout),
      ),
    );
    const { largest, counts } = JSON.parse(out) as { largest: number; counts: number[] };
    expect(counts).toEqual([450, 450, 450, 450]);
    expect(largest).toBeLessThan(11 * 1024 * 1024);
  }, 240_000);

  it("keeps the event loop running while a durable commit waits on a slow disk: the writer thread fsyncs", async () => {
    // Every fsync of the WAL takes 0.7 s. On the writer thread the loop runs a timer due at 20 ms and a read
    // while the append waits; written on the calling thread (the way before), both wait for the fsync.
    const file = join(dir, "slow.db");
    const child = new URL("./sqlite-loop-child.ts", import.meta.url).pathname;
    const run = (mode: "thread" | "inline") =>
      new Promise<{ order: string[]; threaded: boolean }>((resolve, reject) =>
        execFile(
          process.execPath,
          ["--import", "tsx", child, `${file}.${mode}`, join(dir, `slow-${mode}`), mode],
          { env: fsyncFaultEnv(`${file}.${mode}-wal`, join(dir, `slow-${mode}`), 700) },
          (error, stdout, stderr) =>
            error ? reject(new Error(`${error.message}: ${stderr}`)) : resolve(JSON.parse(stdout)),
        ),
      );
    const [threaded, inline] = await Promise.all([run("thread"), run("inline")]);
    expect(threaded.threaded).toBe(true);
    expect(threaded.order.map((step) => step.split(" ")[0])).toEqual(["timer", "read", "append"]);
    expect(inline.threaded).toBe(false);
    expect(inline.order[0]).toBe("append");
  }, 60_000);

  it("stops, failing what it was writing as of unknown outcome, when its writer thread dies; a reopen goes on", async () => {
    const store = open();
    await store.append("k", [msg("one")], { init });
    const thread = (store.sqlite as unknown as { thread: { worker: { terminate(): Promise<number> } } })
      .thread;
    const pending = store.append("k", [msg("two")]);
    await thread.worker.terminate();
    const error = await pending.then(
      () => undefined,
      (e: unknown) => e,
    );
    // Either the commit made it before the thread went (then it is acknowledged), or its outcome is unknown.
    if (error !== undefined) expect(error).toMatchObject({ code: "STORE_FAILED" });
    await expect(store.append("k", [msg("three")])).rejects.toMatchObject({ code: "STORE_FAILED" });
    await store.close();
    const reopened = open();
    const { session } = await reopened.append("k", [msg("four")]);
    const contents = (await reopened.readEntries(session.id)).map(
      (e) => (e as { content?: unknown }).content,
    );
    expect(contents[0]).toBe("one");
    expect(contents.at(-1)).toBe("four");
    expect(contents.filter((c) => c === "three")).toEqual([]);
  });

  it("serves repeated context loads from memory, and never a stale one", async () => {
    const a = open();
    const b = open();
    for (let i = 1; i <= 6; i++) await a.append("k", [msg(`m${i}`)], { init });
    const first = (await a.loadContext("k"))!;
    expect(first.entries.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6]);
    // A compaction in this process moves the window; the next load matches a cold load of the file.
    await a.append("k", [
      {
        type: "compaction",
        summary: "s",
        fromSeq: 1,
        throughSeq: 4,
        firstKeptSeq: 5,
        tokensBefore: 10,
        tokensAfter: 2,
        summarizer: "test",
      },
      msg("m8"),
    ]);
    const warm = (await a.loadContext("k"))!;
    const cold = (await open().loadContext("k"))!;
    expect(warm.entries.map((e) => e.seq)).toEqual([5, 6, 8]);
    expect(warm.entries).toEqual(cold.entries);
    expect(warm.summary).toEqual(cold.summary);
    // Another connection's append is seen at once.
    await b.append("k", [msg("from b")], { init });
    expect((await a.loadContext("k"))!.entries.map((e) => e.seq)).toEqual([5, 6, 8, 9]);
    // A reset starts the next generation's context empty.
    await a.reset("k", "manual");
    expect((await a.loadContext("k"))!.entries).toEqual([]);
    // The returned array is the caller's own.
    const loaded = (await a.loadContext("k"))!;
    loaded.entries.push(first.entries[0]!);
    expect((await a.loadContext("k"))!.entries).toEqual([]);
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
    await Promise.all(Array.from({ length: 200 }, (_, i) => store.append(`k${i}`, [msg("x")], { init })));
    const sizes = store.recentBatchSizes();
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(200);
    expect(sizes.length).toBeLessThan(10);
  });

  it("keeps seq gap-free when two connections write the same key in turn", async () => {
    const a = open();
    const b = open();
    for (let i = 0; i < 10; i++) {
      await a.append("shared", [msg(`a${i}`)], { init });
      await b.append("shared", [msg(`b${i}`)], { init });
    }
    const session = (await a.getSession("shared"))!;
    const entries = await b.readEntries(session.id);
    expect(entries.map((e) => e.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(session.entryCount).toBe(20);
  });

  it("fails appends clearly while another process holds the write lock, loses nothing, and recovers", async () => {
    const store = open({ busyTimeoutMs: 50 });
    await store.append("k", [msg("before")], { init });
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

  it("bounds the appends waiting for the writer by their bytes: beyond maxQueuedBytes, STORE_BUSY, and the accepted ones are stored", async () => {
    const store = open({ maxQueuedBytes: 4096 });
    const big = "x".repeat(1000);
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) => store.append(`k${i}`, [msg(`${i} ${big}`)], { init })),
    );
    const busy = results.filter((r) => r.status === "rejected");
    expect(busy.length).toBeGreaterThan(0);
    for (const r of busy) expect(r.reason).toMatchObject({ code: "STORE_BUSY" });
    const stored = results.flatMap((r, i) => (r.status === "fulfilled" ? [i] : []));
    expect(stored.length).toBeGreaterThan(0);
    for (const i of stored) expect((await store.getSession(`k${i}`))?.entryCount).toBe(1);
    // Once the queue drains, appends are accepted again.
    await expect(store.append("later", [msg(big)], { init })).resolves.toMatchObject({ created: [true] });
  });
});
