import { copyFileSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { SCHEMA_VERSION } from "../../src/store/sqlite/schema.js";
import { cli, parseJson, useTempDir } from "../cli/helpers.js";

const tempDir = useTempDir();
const FIXTURES = "test/fixtures/store";

// One database per earlier schema version, written by that version's own code
// (scripts/fixtures/write-store-fixtures.sh): the upgrade path users take.
const fixtures = readdirSync(FIXTURES)
  .filter((name) => /^sqlite-v\d+\.db$/.test(name))
  .map((name) => ({ name, version: Number(/v(\d+)/.exec(name)?.[1]) }))
  .sort((a, b) => a.version - b.version);

interface Shown {
  entries: Array<{ type: string; content?: string; text?: string }>;
  generations?: unknown[];
}

function userVersion(file: string): number {
  const db = new Database(file, { readonly: true });
  try {
    return db.pragma("user_version", { simple: true }) as number;
  } finally {
    db.close();
  }
}

describe("SQLite upgrades from every earlier schema", () => {
  it("has a fixture for every version before the current one", () => {
    expect(fixtures.map((f) => f.version)).toEqual(
      Array.from({ length: SCHEMA_VERSION - 1 }, (_, i) => i + 1),
    );
  });

  for (const { name, version } of fixtures) {
    it(`v${version}: opens, migrates to v${SCHEMA_VERSION}, keeps every session and entry, searches and appends`, async () => {
      const dir = tempDir();
      const file = join(dir, "sessiond.db");
      copyFileSync(join(FIXTURES, name), file);
      expect(userVersion(file)).toBe(version);

      const list = await cli(dir, ["--data-dir", dir, "sessions", "list", "--all", "--json"]);
      expect(list.stderr).toBe("");
      const keys = parseJson<{ sessions: Array<{ key: string }> }>(list.stdout).sessions.map((s) => s.key);
      expect([...new Set(keys)].sort()).toEqual([
        "telegram:42",
        "web:fixture-1",
        "web:fixture-2",
        "web:fixture-3",
      ]);

      const shown = parseJson<Shown>(
        (await cli(dir, ["--data-dir", dir, "sessions", "show", "telegram:42", "--all", "--json"])).stdout,
      );
      const texts = shown.entries.map((e) => e.content ?? e.text);
      expect(texts).toEqual(
        expect.arrayContaining([
          "I prefer window seats. Booking ref QX-1234.",
          "Noted: window seat for QX-1234.",
          "après la réinitialisation, merci",
          "model timed out",
        ]),
      );

      const appended = await cli(dir, [
        "--data-dir",
        dir,
        "sessions",
        "append",
        "web:fixture-1",
        "after the upgrade",
      ]);
      expect(appended.code).toBe(0);
      const after = parseJson<Shown>(
        (await cli(dir, ["--data-dir", dir, "sessions", "show", "web:fixture-1", "--json"])).stdout,
      );
      expect(after.entries.map((e) => e.content)).toEqual([
        "question 1 about the invoice INV-100",
        "answer 1",
        "after the upgrade",
      ]);
      expect(userVersion(file)).toBe(SCHEMA_VERSION);

      // The search index is built in the background for an upgraded database; each run of the CLI goes on.
      let hits: Array<{ key: string }> = [];
      for (let attempt = 0; attempt < 50 && hits.length === 0; attempt++) {
        const found = await cli(dir, ["--data-dir", dir, "search", "INV-200", "--json"]);
        hits = parseJson<{ hits: Array<{ key: string }> }>(found.stdout).hits;
      }
      expect(hits.map((h) => h.key)).toEqual(["web:fixture-2"]);
    });
  }

  it("a database from a newer sessiond is refused with one line, and left as it was", async () => {
    const dir = tempDir();
    const file = join(dir, "sessiond.db");
    copyFileSync(join(FIXTURES, fixtures.at(-1)?.name ?? ""), file);
    // As a newer sessiond leaves it: in WAL mode, its schema number ahead.
    const db = new Database(file);
    db.pragma("journal_mode = WAL");
    db.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    db.close();
    const before = readFileSync(file);
    for (const args of [
      ["sessions", "list"],
      ["serve", "--port", "0"],
    ]) {
      const result = await cli(dir, ["--data-dir", dir, ...args]);
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        `error [STORE_SCHEMA_NEWER]: ${file}: the database's schema is version ${SCHEMA_VERSION + 1}, newer than this sessiond knows (${SCHEMA_VERSION}): upgrade sessiond, or restore the backup taken before the upgrade\n`,
      );
    }
    expect(readFileSync(file).equals(before)).toBe(true);
  });
});
