import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { readyChild } from "../support/ready-child.js";

/** Starts the race child, resolves `ready` once it has opened the store, `exit` with its stdout. */
const child = (args: string[]) => readyChild(new URL("./sqlite-race-child.ts", import.meta.url), args);

describe("SQLite store: two processes on one file", () => {
  let dir: string;
  let path: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "sessiond-sqlite-race-"));
    path = join(dir, "sessiond.db");
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("appending to the same keys at once: every append stored once, seqs gap-free", async () => {
    const rounds = 30;
    const keys = 10;
    // Created first, so neither child races to create the sessions (that is a different rule).
    const setup = new SqliteStore({ path });
    for (let i = 0; i < keys; i++)
      await setup.append(`shared:${i}`, [{ type: "message", role: "user", content: "start" }], {
        init: {
          agent: "main",
          channel: "cli",
          createdBy: "setup",
        },
      });
    await setup.close();

    const children = ["a", "b"].map((tag) => child([path, tag, String(rounds), String(keys)]));
    await Promise.all(children.map((c) => c.ready));
    for (const c of children) c.proc.stdin.end("go\n");
    for (const out of await Promise.all(children.map((c) => c.exit)))
      expect(out).toContain(`done ${rounds * (keys + 1)}`);

    const store = new SqliteStore({ path });
    try {
      let total = 0;
      for (let i = 0; i < keys; i++) {
        const session = (await store.getSession(`shared:${i}`))!;
        const entries = await store.readEntries(session.id);
        expect(entries.map((e) => e.seq)).toEqual(entries.map((_, j) => j + 1));
        expect(new Set(entries.map((e) => e.id)).size).toBe(entries.length);
        expect(session.entryCount).toBe(entries.length);
        total += entries.length;
      }
      expect(total).toBe(keys + 2 * rounds * (keys + 1));
    } finally {
      await store.close();
    }
  });

  it("refuses an entry whose seq or idempotency key the other table already holds", async () => {
    const store = new SqliteStore({ path });
    await store.append("k", [{ type: "message", role: "user", content: "one", idempotencyKey: "m-1" }], {
      init: {
        agent: "main",
        channel: "cli",
        createdBy: "u",
      },
    });
    await store.close();
    const db = new Database(path);
    try {
      const row = db.prepare("SELECT * FROM entries").get() as Record<string, unknown>;
      const insert = (table: string, values: Record<string, unknown>) =>
        db
          .prepare(
            `INSERT INTO ${table} (sid, seq, id, ts, type, idem_key, data) VALUES (@sid, @seq, @id, @ts, @type, @idem_key, @data)`,
          )
          .run({ ...row, ...values });
      expect(() => insert("journal", { id: "other-1" })).toThrow(/already stored/);
      expect(() => insert("journal", { id: "other-2", seq: 2 })).toThrow(/already stored/);
      insert("journal", { id: "other-3", seq: 2, idem_key: null });
      expect(() => insert("entries", { id: "other-4", seq: 2, idem_key: null })).toThrow(/already stored/);
    } finally {
      db.close();
    }
  });

  it("a fold that finds an entry stored twice (a file from before v2) makes every later write fail with STORE_CORRUPT", async () => {
    const init = { agent: "main", channel: "cli", createdBy: "u" };
    const first = new SqliteStore({ path });
    await first.append("k", [{ type: "message", role: "user", content: "one" }], { init });
    await first.close();
    // What two processes could leave behind under schema v1: seq 1 in entries and in the journal.
    const db = new Database(path);
    db.exec(
      "DROP TRIGGER journal_unique_across; DROP TRIGGER entries_unique_across; PRAGMA user_version = 1",
    );
    const row = db.prepare("SELECT * FROM entries").get() as Record<string, unknown>;
    db.prepare(
      "INSERT INTO journal (sid, seq, id, ts, type, idem_key, data) VALUES (@sid, @seq, 'twin', @ts, @type, @idem_key, @data)",
    ).run(row);
    db.close();

    const store = new SqliteStore({ path, foldThreshold: 1 });
    try {
      const attempts = [];
      for (let i = 0; i < 2; i++)
        attempts.push(
          await store.append("k", [{ type: "message", role: "user", content: `m${i}` }]).then(
            () => undefined,
            (error: unknown) => error,
          ),
        );
      expect(attempts.at(-1)).toMatchObject({
        code: "STORE_CORRUPT",
        message: expect.stringMatching(/entry 1 twice/),
      });
      const session = (await store.getSession("k"))!;
      expect((await store.readEntries(session.id)).length).toBeGreaterThan(0);
    } finally {
      await store.close();
    }
  });

  it("an append expecting a session another process reset fails with SESSION_CHANGED", async () => {
    const init = { agent: "main", channel: "cli", createdBy: "u" };
    const gateway = new SqliteStore({ path });
    const cli = new SqliteStore({ path });
    try {
      const { session } = await gateway.append("k", [{ type: "message", role: "user", content: "q" }], {
        init,
      });
      await cli.reset("k", "manual");
      await expect(
        gateway.append("k", [{ type: "message", role: "assistant", content: "a" }], {
          expectSessionId: session.id,
        }),
      ).rejects.toMatchObject({ code: "SESSION_CHANGED" });
      expect((await cli.getSession("k"))!.entryCount).toBe(0);
    } finally {
      await gateway.close();
      await cli.close();
    }
  });
});
