import { execFile } from "node:child_process";
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { binDir } from "../../bench/postgres-cluster.js";
import { createEngine, type Engine } from "../../src/index.js";
import type { Entry } from "../../src/model/entry.js";
import { searchStore } from "../../src/search/searchable.js";
import type { PostgresStore } from "../../src/store/postgres/postgres-store.js";
import { SCHEMA_VERSION } from "../../src/store/postgres/schema.js";
import { cli, useTempDir } from "../cli/helpers.js";
import { type PostgresCluster, startPostgres } from "../support/postgres.js";

const run = promisify(execFile);
const tempDir = useTempDir();
const FIXTURES = "test/fixtures/store";

// One plain-SQL dump per earlier schema version, written by that version's own code
// (scripts/fixtures/write-postgres-fixtures.ts): the upgrade path users take.
const fixtures = readdirSync(FIXTURES)
  .filter((name) => /^postgres-v\d+\.sql$/.test(name))
  .map((name) => ({ name, version: Number(/v(\d+)/.exec(name)?.[1]) }))
  .sort((a, b) => a.version - b.version);

let cluster: PostgresCluster;
beforeAll(async () => {
  cluster = await startPostgres();
});
afterAll(() => cluster?.remove());

/**
 * A fresh database holding the dump, loaded as `psql -f` does by default (a failed statement is reported
 * and the rest goes on, as pg_restore does); the errors it printed.
 */
async function restored(fixture: string): Promise<{ url: string; errors: string[] }> {
  const url = await cluster.createDatabase();
  const { stderr } = await run(join(binDir(), "psql"), [
    "-X",
    "-q",
    "-d",
    url,
    "-f",
    join(FIXTURES, fixture),
  ]);
  return { url, errors: stderr.split("\n").filter((line) => line.includes("ERROR:")) };
}

// A dump of a schema-3 database (search words as a generated column) restores with one error: the CJK
// trigram index is on sessiond_search_cjk, a SQL function whose body calls sessiond_search_text
// unqualified, and pg_dump restores with an empty search_path. Every row restores; migration 4 drops that
// index and indexes the CJK text column instead, so the upgrade from such a restore is whole.
const RESTORE_ERRORS: Record<number, RegExp[]> = {
  3: [/postgres-v3\.sql:\d+: ERROR: {2}function sessiond_search_text\(text, text\) does not exist$/],
};

async function sql<T extends pg.QueryResultRow>(url: string, text: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(text)).rows;
  } finally {
    await client.end();
  }
}

const schemaOf = async (url: string) =>
  (await sql<{ v: number }>(url, "SELECT max(version) AS v FROM sessiond_schema"))[0]?.v;

/** The database as plain SQL, without the random key pg_dump's \\restrict lines carry on every run. */
async function dump(url: string): Promise<string> {
  const { stdout } = await run(join(binDir(), "pg_dump"), ["--no-owner", "--format=plain", "--dbname", url]);
  return stdout.replace(/^\\(un)?restrict .*$/gm, "");
}

function texts(entries: Entry[]): Array<string | undefined> {
  return entries.map((e) =>
    e.type === "message" ? e.content : e.type === "note" ? e.text : e.type === "title" ? e.title : e.type,
  );
}

async function withEngine<T>(url: string, fn: (engine: Engine) => Promise<T>): Promise<T> {
  const engine = await createEngine({ dataDir: tempDir(), store: { backend: "postgres", url } });
  try {
    return await fn(engine);
  } finally {
    await engine.close();
  }
}

describe("PostgreSQL upgrades from every earlier schema", () => {
  it("has a fixture for every version before the current one", () => {
    expect(fixtures.map((f) => f.version)).toEqual(
      Array.from({ length: SCHEMA_VERSION - 1 }, (_, i) => i + 1),
    );
  });

  for (const { name, version } of fixtures) {
    it(`v${version}: migrates to v${SCHEMA_VERSION}, keeps every session, entry and inbox item, searches and appends`, async () => {
      const { url, errors } = await restored(name);
      const expected = RESTORE_ERRORS[version] ?? [];
      expect(errors).toHaveLength(expected.length);
      for (const [i, line] of errors.entries()) expect(line).toMatch(expected[i] ?? /^$/);
      expect(await schemaOf(url)).toBe(version);

      await withEngine(url, async (engine) => {
        expect(await schemaOf(url)).toBe(SCHEMA_VERSION);
        const page = await engine.sessions.list({ limit: 100 });
        expect(page.sessions.map((s) => s.key).sort()).toEqual([
          "slack:T1:C9",
          "telegram:42",
          "web:fixture-1",
          "web:fixture-2",
          "web:fixture-3",
        ]);

        const generations = await engine.sessions.generations("telegram:42");
        expect(generations.map((g) => [g.generation, g.state]).sort()).toEqual([
          [1, "archived"],
          [2, "active"],
        ]);
        const archived = generations.find((g) => g.state === "archived");
        expect(archived?.title).toBe("Window seat QX-1234");
        expect(texts(await engine.store.readEntries(archived?.id ?? ""))).toEqual([
          "I prefer window seats. Booking ref QX-1234.",
          "Noted: window seat for QX-1234.",
          "Window seat QX-1234",
          "reset",
        ]);
        expect(texts(await engine.history("telegram:42"))).toEqual([
          "après la réinitialisation, merci",
          "model timed out",
        ]);

        // The compaction still bounds the context: its summary, then what came after it.
        const context = await engine.context("slack:T1:C9");
        expect(context?.summary?.summary).toContain("OPS-701");
        expect(context?.session.contextFromSeq).toBeGreaterThan(1);
        expect(texts(context?.entries.slice(-1) ?? [])).toEqual(["after the compaction"]);
        expect(await engine.history("slack:T1:C9")).toHaveLength(26);

        await engine.append("web:fixture-1", [
          { type: "message", role: "user", content: "after the upgrade" },
        ]);
        expect(texts(await engine.history("web:fixture-1"))).toEqual([
          "question 1 about the invoice INV-100",
          "answer 1",
          "after the upgrade",
        ]);

        const store = engine.store as PostgresStore;
        await store.searchReindexed();
        const found = await searchStore(store, { text: "INV-200" });
        expect(found.hits.map((h) => h.key)).toEqual(["web:fixture-2"]);
        const old = await searchStore(store, { text: "QX-1234", archived: "only" });
        expect(old.hits.map((h) => h.key)).toEqual(["telegram:42", "telegram:42"]);
        const fresh = await searchStore(store, { text: "upgrade" });
        expect(fresh.hits.map((h) => h.key)).toEqual(["web:fixture-1"]);

        // The inbox: the finished item kept, the one left pending taken over by today's process.
        const inbox = store.inbox();
        const taken = await inbox.takeOver();
        expect(taken.map((item) => [item.envelope.text, item.state])).toEqual([["still queued", "pending"]]);
        const rows = await sql<{ state: string; dedupe_key: string }>(
          url,
          "SELECT state, dedupe_key FROM inbox ORDER BY n",
        );
        expect(rows).toEqual([
          { state: "done", dedupe_key: "telegram:m1" },
          { state: "pending", dedupe_key: "telegram:m2" },
        ]);
      });
    });
  }

  it("a database from a newer sessiond is refused with one line, and left as it was", async () => {
    const { url } = await restored(fixtures.at(-1)?.name ?? "");
    await withEngine(url, async () => {});
    await sql(url, `INSERT INTO sessiond_schema (version) VALUES (${SCHEMA_VERSION + 1})`);
    const before = await dump(url);
    const dir = tempDir();
    writeFileSync(join(dir, "sessiond.yaml"), `store: { backend: postgres, url: "${url}" }\n`);
    for (const args of [
      ["sessions", "list"],
      ["serve", "--port", "0"],
    ]) {
      const result = await cli(dir, args);
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        `error [STORE_SCHEMA_NEWER]: the database's schema is version ${SCHEMA_VERSION + 1}, newer than this sessiond knows (${SCHEMA_VERSION}): upgrade sessiond, or point it at another database\n`,
      );
    }
    expect(await dump(url)).toBe(before);
  });
});
