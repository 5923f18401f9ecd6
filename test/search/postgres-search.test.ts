import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { normaliseSearch } from "../../src/search/query.js";
import { PostgresStore } from "../../src/store/postgres/postgres-store.js";
import { MIGRATIONS } from "../../src/store/postgres/schema.js";
import { windowSql } from "../../src/store/postgres/search.js";
import { json, startTestGateway } from "../gateway/http/helpers.js";
import { type PostgresCluster, startPostgres } from "../support/postgres.js";
import { runSearchContract } from "./search-contract.js";

let cluster: PostgresCluster;
beforeAll(async () => {
  cluster = await startPostgres();
});
afterAll(() => cluster?.remove());

// Each test's store is a database of its own on the throwaway cluster.
runSearchContract("postgres", async () => PostgresStore.open({ url: await cluster.createDatabase() }));

/** A new database migrated to schema `version` only, as an older sessiond left it, and a client on it. */
async function databaseAt(version: number): Promise<{ url: string; client: pg.Client }> {
  const url = await cluster.createDatabase();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query(
    "CREATE TABLE sessiond_schema (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())",
  );
  for (const [i, migration] of MIGRATIONS.slice(0, version).entries()) {
    await client.query(migration);
    await client.query("INSERT INTO sessiond_schema (version) VALUES ($1)", [i + 1]);
  }
  return { url, client };
}

describe("search on PostgreSQL", () => {
  it("indexes the messages of a database written before the search migration when it upgrades", async () => {
    const { url, client } = await databaseAt(2);
    try {
      const now = Date.now();
      await client.query(
        `INSERT INTO sessions (id, key, generation, state, agent, channel, created_by, created_at, last_activity_at)
         VALUES ('s-old', 'old:1', 1, 'active', 'main', 'telegram', 'test', $1, $1)`,
        [now],
      );
      const message = (role: string, content: string) => JSON.stringify({ type: "message", role, content });
      await client.query(
        `INSERT INTO entries (sid, seq, id, ts, type, data)
         SELECT sid, 1, 'e1', $1::bigint, 'message', $2 FROM sessions UNION ALL
         SELECT sid, 2, 'e2', $1::bigint, 'message', $3 FROM sessions`,
        [now, message("user", "a quokka from before"), message("tool", "quokka tool output")],
      );
    } finally {
      await client.end();
    }
    const store = await PostgresStore.open({ url });
    try {
      const { hits } = await store.search({ text: "quokka" });
      expect(hits.map((h) => [h.key, h.seq, h.snippet])).toEqual([
        ["old:1", 1, "a <mark>quokka</mark> from before"],
      ]);
    } finally {
      await store.close();
    }
  });

  it("upgrades a schema-3 database (migration 4): its words kept, its CJK text moved to the column the trigram index reads", async () => {
    const { url, client } = await databaseAt(3);
    try {
      const now = Date.now();
      await client.query(
        `INSERT INTO sessions (id, key, generation, state, agent, channel, created_by, created_at, last_activity_at,
           entry_count, message_count)
         VALUES ('s-old', 'old:1', 1, 'active', 'main', 'telegram', 'test', $1, $1, 2, 2)`,
        [now],
      );
      const message = (role: string, content: string) => JSON.stringify({ type: "message", role, content });
      await client.query(
        `INSERT INTO entries (sid, seq, id, ts, type, data)
         SELECT sid, 1, 'e1', $1::bigint, 'message', $2 FROM sessions UNION ALL
         SELECT sid, 2, 'e2', $1::bigint, 'message', $3 FROM sessions`,
        [now, message("user", "a café with a quokka"), message("assistant", "我们明天去北京大学")],
      );
    } finally {
      await client.end();
    }
    const store = await PostgresStore.open({ url });
    try {
      await store.append("old:1", [{ type: "message", role: "user", content: "北京 again, and a quokka" }]);
      const bySeq = async (text: string) => (await store.search({ text })).hits.map((h) => h.seq).sort();
      expect(await bySeq("quokka")).toEqual([1, 3]);
      expect(await bySeq("cafe")).toEqual([1]);
      expect(await bySeq("北京")).toEqual([2, 3]);
      const { rows } = await store.pool.query<{ generated: string; cjk: number; grams: string | null }>(
        `SELECT (SELECT attgenerated FROM pg_attribute WHERE attrelid = 'entries'::regclass
            AND attname = 'search_words') AS generated,
          (SELECT count(*)::int FROM entries WHERE search_cjk IS NOT NULL) AS cjk,
          (SELECT indexdef FROM pg_indexes WHERE indexname = 'entries_search_grams') AS grams`,
      );
      expect(rows[0]!.generated).toBe("");
      expect(rows[0]!.cjk).toBe(2);
      if (rows[0]!.grams !== null)
        expect(rows[0]!.grams).toMatch(/\(search_cjk gin_trgm_ops\) WHERE \(search_cjk IS NOT NULL\)/);
    } finally {
      await store.close();
    }
  });

  it("looks up a window's sessions by sid for its rows only and parses no JSON on the server", async () => {
    const store = await PostgresStore.open({ url: await cluster.createDatabase() });
    try {
      // 100 sessions of 20 messages, one with a rare word: for its window of one row the planner hashed
      // every session (a seq scan: 5.7 ms on 10,000), and each row's JSON was parsed twice more.
      for (let s = 0; s < 100; s++)
        await store.append(
          `k:${s}`,
          Array.from({ length: 20 }, (_, i) => ({
            type: "message" as const,
            role: "user" as const,
            content: s === 42 && i === 7 ? "a zygomorphic flower" : `word${(s * 7 + i) % 500}`,
          })),
          { init: { agent: "main", channel: "telegram", createdBy: "test" } },
        );
      await store.pool.query("ANALYZE");
      const plan = async (text: string): Promise<string> => {
        const { sql, params } = windowSql(normaliseSearch({ text }, Date.now()), undefined);
        const { rows } = await store.pool.query<{ "QUERY PLAN": unknown }>(
          `EXPLAIN (VERBOSE, FORMAT JSON) ${sql}`,
          params,
        );
        return JSON.stringify(rows[0]!["QUERY PLAN"]);
      };
      for (const text of ["zygomorphic", "word1", '"a zygomorphic"']) {
        const shape = await plan(text);
        expect(shape).not.toContain("Hash Join");
        expect(shape).not.toMatch(/jsonb|sessiond_search_text/);
      }
      const { hits } = await store.search({ text: "zygo" });
      expect(hits.map((h) => [h.key, h.seq, h.role, h.snippet])).toEqual([
        ["k:42", 8, "user", "a <mark>zygo</mark>morphic flower"],
      ]);
    } finally {
      await store.close();
    }
  });

  it("stores and finds a message with more words than a tsvector holds (the server's to_tsvector refused its append)", async () => {
    const store = await PostgresStore.open({ url: await cluster.createDatabase() });
    try {
      // 200,000 distinct words of 6-7 letters: about 1.3 MB of lexemes, past PostgreSQL's 1 MB.
      const words = Array.from({ length: 200_000 }, (_, i) => `w${(i + 36 ** 5).toString(36)}`);
      words[0] = "aardvark";
      await store.append("big:1", [{ type: "message", role: "user", content: words.join(" ") }], {
        init: { agent: "main", channel: "telegram", createdBy: "test" },
      });
      expect((await store.search({ text: "aardvark" })).hits.map((h) => h.key)).toEqual(["big:1"]);
    } finally {
      await store.close();
    }
  });

  it("answers GET /api/search (no longer 501)", async () => {
    const gw = await startTestGateway({
      store: { backend: "postgres", url: await cluster.createDatabase() },
    });
    try {
      await gw.engine.store.append("telegram:1", [{ type: "message", role: "user", content: "a kiwi" }], {
        init: { agent: "main", channel: "telegram", createdBy: "test" },
      });
      const res = await gw.api("/api/search?q=kiwi");
      expect(res.status).toBe(200);
      const body = (await json(res)) as unknown as { hits: Array<{ key: string; snippet: string }> };
      expect(body.hits.map((h) => [h.key, h.snippet])).toEqual([["telegram:1", "a <mark>kiwi</mark>"]]);
    } finally {
      await gw.stop();
    }
  });
});
