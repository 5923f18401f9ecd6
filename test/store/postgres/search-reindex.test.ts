import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Entry } from "../../../src/model/entry.js";
import { PostgresStore } from "../../../src/store/postgres/postgres-store.js";
import { searchColumns } from "../../../src/store/postgres/search-words.js";
import { type PostgresCluster, startPostgres } from "../../support/postgres.js";

let cluster: PostgresCluster;
beforeAll(async () => {
  cluster = await startPostgres();
});
afterAll(() => cluster?.remove());

async function sql<T extends pg.QueryResultRow>(
  url: string,
  text: string,
  params: unknown[] = [],
): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(text, params)).rows;
  } finally {
    await client.end();
  }
}

/** The message rows whose search columns differ from what sessiond computes for them today. */
async function stale(url: string): Promise<number> {
  const rows = await sql<{ n: string; data: string }>(
    url,
    "SELECT n, data FROM entries WHERE type = 'message'",
  );
  const wanted = rows.map((row) => searchColumns(JSON.parse(row.data) as Entry));
  const [counted] = await sql<{ stale: number }>(
    url,
    `SELECT count(*)::int AS stale FROM entries e
     JOIN unnest($1::bigint[], $2::text[], $3::text[]) AS u(n, words, cjk) ON e.n = u.n
     WHERE e.search_words IS DISTINCT FROM u.words::tsvector OR e.search_cjk IS DISTINCT FROM u.cjk`,
    [rows.map((row) => row.n), wanted.map((w) => w.words), wanted.map((w) => w.cjk)],
  );
  return counted?.stale ?? -1;
}

describe("PostgreSQL search words folded again after an upgrade (migration 6)", () => {
  it("redoes every entry the server had folded, in batches of 500, with two processes at once and one stopped", async () => {
    const url = await cluster.createDatabase();
    const first = await PostgresStore.open({ url });
    for (let round = 0; round < 3; round++) {
      await first.append(
        `web:load-${round}`,
        Array.from({ length: 450 }, (_, i) => ({
          type: "message" as const,
          role: "user" as const,
          content: `ticket INV-${round}${i} at 3.14 x.y café 北京${i}`,
        })),
        { init: { agent: "main", channel: "web", createdBy: "test" } },
      );
    }
    await first.close();
    // As migration 3 left them: the server's folding, and the work recorded as migration 6 records it.
    await sql(
      url,
      `UPDATE entries SET search_words = to_tsvector('simple', data::jsonb->>'content'), search_cjk = NULL
       WHERE type = 'message'`,
    );
    await sql(url, "INSERT INTO search_reindex (upto) SELECT max(n) FROM entries");
    expect(await stale(url)).toBe(1350);

    // One process stops at once (after the batch it is in, if any); two more open together and finish it.
    const stopped = await PostgresStore.open({ url });
    await stopped.close();
    const [a, b] = await Promise.all([PostgresStore.open({ url }), PostgresStore.open({ url })]);
    await Promise.all([a.searchReindexed(), b.searchReindexed()]);
    const left = await sql(url, "SELECT upto FROM search_reindex");
    // The one that took the row last finished it; the other found it locked and left it to it.
    expect(left).toEqual([]);
    expect(await stale(url)).toBe(0);
    const found = await a.search({ text: "INV-2449" });
    expect(found.hits.map((h) => h.key)).toEqual(["web:load-2"]);
    expect(found.indexing).toBe(false);
    await Promise.all([a.close(), b.close()]);
  });

  it("has nothing to do on a database created by this version", async () => {
    const url = await cluster.createDatabase();
    const store = await PostgresStore.open({ url });
    await store.searchReindexed();
    expect(await sql(url, "SELECT upto FROM search_reindex")).toEqual([]);
    await store.close();
  });
});
