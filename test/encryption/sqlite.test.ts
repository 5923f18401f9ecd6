import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import type { Store } from "../../src/store/store.js";
import { filesHolding, uniqueWord } from "../erasure/byte-scan.js";
import { init, msg, sealedStoreContract } from "./sealed-contract.js";

let dir = "";
const path = () => join(dir, "sessiond.db");
const withDb = <T>(read: (db: Database.Database) => T): T => {
  const db = new Database(path());
  try {
    return read(db);
  } finally {
    db.close();
  }
};
const BOTH =
  "SELECT data FROM entries WHERE sid = ? AND seq = ? UNION ALL SELECT data FROM journal WHERE sid = ? AND seq = ?";

sealedStoreContract("SQLite", {
  fresh: () => {
    dir = mkdtempSync(join(tmpdir(), "sessiond-sealed-sqlite-"));
  },
  open: async (encryption) => new SqliteStore({ path: path(), ...(encryption ? { encryption } : {}) }),
  holding: async (word) => filesHolding(dir, word),
  stored: async (sessionId, seq) =>
    withDb((db) => {
      const row = db.prepare("SELECT sid, data_key FROM sessions WHERE id = ?").get(sessionId) as
        | { sid: number; data_key: string | null }
        | undefined;
      const body = row && (db.prepare(BOTH).get(row.sid, seq, row.sid, seq) as { data: string } | undefined);
      return { body: body?.data, dataKey: row?.data_key ?? undefined };
    }),
  damage: async (sessionId, seq) =>
    withDb((db) => {
      const { sid } = db.prepare("SELECT sid FROM sessions WHERE id = ?").get(sessionId) as { sid: number };
      for (const table of ["entries", "journal"]) {
        const row = db.prepare(`SELECT data FROM ${table} WHERE sid = ? AND seq = ?`).get(sid, seq) as
          | { data: string }
          | undefined;
        if (!row) continue;
        const body = JSON.parse(row.data) as { sealed: string };
        const at = 30;
        body.sealed =
          body.sealed.slice(0, at) + (body.sealed[at] === "A" ? "B" : "A") + body.sealed.slice(at + 1);
        db.prepare(`UPDATE ${table} SET data = ? WHERE sid = ? AND seq = ?`).run(
          JSON.stringify(body),
          sid,
          seq,
        );
      }
    }),
  dataKeys: async () =>
    withDb(
      (db) =>
        db.prepare("SELECT id, data_key AS dataKey FROM sessions WHERE data_key IS NOT NULL").all() as Array<{
          id: string;
          dataKey: string;
        }>,
    ),
  fingerprint: async () => {
    const hash = createHash("sha256");
    for (const name of readdirSync(dir).sort())
      if (!name.endsWith("-shm") && existsSync(join(dir, name)))
        hash.update(name).update(readFileSync(join(dir, name)));
    return hash.digest("hex");
  },
  afterDelete: async (store: Store, key: string) => {
    await (store as SqliteStore).scrub([key]);
  },
  sealsInbox: true,
  cleanup: () => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  },
});

describe("turning encryption on for a SQLite store written in clear", () => {
  it("keeps reading the sessions written in clear, and seals the next generation of their keys", async () => {
    dir = mkdtempSync(join(tmpdir(), "sessiond-sealed-upgrade-"));
    try {
      const plain = new SqliteStore({ path: path() });
      const { session: before } = await plain.append("k", [msg("written in clear")], { init });
      await plain.close();
      const sealed = new SqliteStore({ path: path(), encryption: { key: randomBytes(32) } });
      await sealed.append("k", [msg("still the clear session")]);
      expect(
        (await sealed.readEntries(before.id)).map((e) => (e.type === "message" ? e.content : "")),
      ).toEqual(["written in clear", "still the clear session"]);
      const word = uniqueWord("next");
      const { current } = await sealed.reset("k", "manual", init);
      await sealed.append("k", [msg(word)]);
      await sealed.flush();
      expect(filesHolding(dir, word)).toEqual([]);
      expect((await sealed.readEntries(current.id)).at(-1)).toMatchObject({ content: word });
      await sealed.close();
      const keyed = withDb((db) => db.prepare("SELECT id FROM sessions WHERE data_key IS NOT NULL").all());
      expect(keyed).toEqual([{ id: current.id }]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
