import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { type ServedGateway, serveGateway } from "../support/serve-child.js";
import { cli, parseJson, seed, useTempDir } from "./helpers.js";

const tempDir = useTempDir();
const served: ServedGateway[] = [];
afterEach(() => {
  for (const s of served.splice(0)) s.kill();
});

function keysIn(file: string): string[] {
  const db = new Database(file, { readonly: true });
  try {
    expect(db.pragma("quick_check", { simple: true })).toBe("ok");
    const rows = db.prepare("SELECT DISTINCT key FROM sessions ORDER BY key").all() as Array<{ key: string }>;
    return rows.map((r) => r.key);
  } finally {
    db.close();
  }
}

describe("sessiond backup and restore (SQLite)", () => {
  it("takes a whole, consistent copy while the gateway writes, and restore puts it back", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "sessiond.yaml"), "agents:\n  - id: main\n");
    const token = "backup-test-token-0123456789abcdef";
    const gateway = serveGateway(dir, token);
    served.push(gateway);
    const url = await gateway.listening();
    const chat = (i: number) =>
      fetch(`${url}/api/chat`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ message: `message ${i}`, session_id: `admin-${i}` }),
      }).then((r) => r.status);
    // Answered before the backup starts: in it for certain.
    expect(await Promise.all(Array.from({ length: 10 }, (_, i) => chat(i)))).toEqual(Array(10).fill(200));
    // And more while it runs.
    const during = Promise.all(Array.from({ length: 20 }, (_, i) => chat(100 + i)));
    const backup = await cli(dir, ["--data-dir", dir, "backup", "copy.db"]);
    await during;
    expect(backup.stderr).toBe("");
    expect(backup.code).toBe(0);
    expect(backup.stdout).toMatch(/^backed up .*sessiond\.db to .*copy\.db \(\d+ pages\)\n$/);
    const copied = keysIn(join(dir, "copy.db"));
    for (let i = 0; i < 10; i++) expect(copied).toContain(`admin-${i}`);
    expect(existsSync(join(dir, "copy.db-wal"))).toBe(false);
    expect(readdirSync(dir).filter((n) => n.includes(".partial"))).toEqual([]);

    const fresh = tempDir();
    const restored = await cli(fresh, ["--data-dir", fresh, "restore", join(dir, "copy.db")]);
    expect(restored.stderr).toBe("");
    expect(restored.code).toBe(0);
    const list = await cli(fresh, ["--data-dir", fresh, "sessions", "list", "--json", "--limit", "1000"]);
    const keys = parseJson<{ sessions: Array<{ key: string }> }>(list.stdout).sessions.map((s) => s.key);
    expect(keys.sort()).toEqual(copied);
  });

  it("restore keeps the database it replaces beside it", async () => {
    const dir = tempDir();
    await seed(dir, async (engine) => {
      await engine.append("web:old", [{ type: "message", role: "user", content: "before" }]);
    });
    const other = tempDir();
    await seed(other, async (engine) => {
      await engine.append("web:new", [{ type: "message", role: "user", content: "from the backup" }]);
    });
    expect((await cli(other, ["--data-dir", other, "backup", "b.db"])).code).toBe(0);
    const result = await cli(dir, ["--data-dir", dir, "restore", join(other, "b.db")]);
    expect(result.code).toBe(0);
    const aside = /kept as (.*)\n/.exec(result.stdout)?.[1] ?? "";
    expect(keysIn(aside)).toEqual(["web:old"]);
    expect(keysIn(join(dir, "sessiond.db"))).toEqual(["web:new"]);
  });

  it("refuses a damaged backup with one line and leaves the database as it was", async () => {
    const dir = tempDir();
    await seed(dir, async (engine) => {
      await engine.append("web:kept", [{ type: "message", role: "user", content: "still here" }]);
    });
    writeFileSync(join(dir, "bad.db"), "not a database at all");
    const before = readFileSync(join(dir, "sessiond.db"));
    const result = await cli(dir, ["--data-dir", dir, "restore", "bad.db"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error: .*bad\.db is not a sessiond SQLite backup \(.*\)\n$/);
    expect(readFileSync(join(dir, "sessiond.db")).equals(before)).toBe(true);
  });

  it("PostgreSQL: points to pg_dump and pg_restore, in one line", async () => {
    const dir = tempDir();
    writeFileSync(
      join(dir, "sessiond.yaml"),
      "store: { backend: postgres, url: postgres://127.0.0.1:9/x }\n",
    );
    const backup = await cli(dir, ["backup", "x.dump"]);
    expect(backup.code).toBe(1);
    expect(backup.stderr).toBe(
      "error: the PostgreSQL store is backed up with PostgreSQL's own tool: pg_dump --format=custom --file <file> <database url>\n",
    );
    const restore = await cli(dir, ["restore", "x.dump"]);
    expect(restore.stderr).toContain("pg_restore");
  });
});
