/**
 * Search on PostgreSQL: the same corpus and queries as bench/search.ts (1,000,000 user messages in 10,000
 * sessions; --quick: 100,000 in 1,000), on a throwaway cluster. The corpus is built by the server in a few
 * statements, not through the store's append path: the sessions and entries from `generate_series` over the
 * bulk builder's 997 contents, each content's words by `to_tsvector` once (for this ASCII corpus the same
 * lexemes as sessiond's own, search-words.ts), the GIN and `n` indexes built once after the rows. The rare term's five
 * messages go through the store.
 */
import pg from "pg";
import { PostgresStore } from "../src/store/postgres/postgres-store.js";
import { startPostgres } from "./postgres-cluster.js";
import type { Bench, BenchContext, Row } from "./report.js";
import { fixed, int } from "./report.js";
import { PER_SESSION, type QueryLatencies, queryLatencies, queryRows, RARE } from "./search.js";
import { BENCH_INIT, benchKey, messageContents, userMessage } from "./support.js";

export interface PgSearchResult extends QueryLatencies {
  messages: number;
  sessions: number;
  buildSec: number;
}

/** The indexes the bulk load goes without, built after it (migrations 3 and 4 define them). */
const DEFERRED_INDEXES = ["entries_search_words", "entries_search_grams", "entries_n"];

export async function buildCorpus(url: string, sessions: number): Promise<number> {
  const start = performance.now();
  await (await PostgresStore.open({ url })).close();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ indexdef: string }>(
      "SELECT indexdef FROM pg_indexes WHERE indexname = ANY($1::text[])",
      [DEFERRED_INDEXES],
    );
    await client.query(`DROP INDEX IF EXISTS ${DEFERRED_INDEXES.join(", ")}`);
    await client.query("SET synchronous_commit = off; SET maintenance_work_mem = '256MB'");
    const now = Date.now();
    await client.query(
      `INSERT INTO sessions (id, key, generation, state, agent, channel, created_by, created_at,
        last_activity_at, entry_count, message_count)
      SELECT 'bench-' || s, 'telegram:' || (100000 + s), 1, 'active', $1, $2, $3, $4, $4, $5, $5
      FROM generate_series(0, $6 - 1) s`,
      [
        BENCH_INIT.agent,
        BENCH_INIT.channel,
        BENCH_INIT.createdBy,
        now - PER_SESSION * 60_000,
        PER_SESSION,
        sessions,
      ],
    );
    // Each content's JSON and words once: the corpus repeats 997 of them.
    const contents = messageContents(997, 200, 7);
    await client.query(
      `CREATE TEMP TABLE contents AS SELECT i, json_build_object('type', 'message', 'role', 'user',
        'content', c)::text AS data, to_tsvector('simple', c) AS words
      FROM unnest($1::int[], $2::text[]) AS u(i, c)`,
      [contents.map((_, i) => i), contents],
    );
    // One round of every session per seq, as concurrent chats commit them; a minute between rounds.
    for (let seq = 1; seq <= PER_SESSION; seq += 10) {
      await client.query(
        `INSERT INTO entries (sid, seq, id, ts, type, data, search_words)
        SELECT s.sid, q, 'e-' || s.sid || '-' || q, $1::bigint + q * 60000, 'message', c.data, c.words
        FROM generate_series($2::int, $3::int) q CROSS JOIN sessions s
          JOIN contents c ON c.i = ((s.sid - 1) * 31 + q) % 997
        ORDER BY q, s.sid`,
        [now - PER_SESSION * 60_000, seq, Math.min(seq + 9, PER_SESSION)],
      );
    }
    for (const { indexdef } of rows) await client.query(indexdef);
    await client.query("ANALYZE");
  } finally {
    await client.end();
  }
  return performance.now() - start;
}

async function run(ctx: BenchContext): Promise<PgSearchResult> {
  const sessions = ctx.quick ? 1_000 : 10_000;
  const cluster = await startPostgres();
  try {
    const url = await cluster.createDatabase();
    ctx.log(`postgres search: building ${int(sessions * PER_SESSION)} messages in ${int(sessions)} sessions`);
    const buildMs = await buildCorpus(url, sessions);
    ctx.log(`postgres search: built in ${fixed(buildMs / 1000, 1)} s`);
    const store = await PostgresStore.open({ url });
    try {
      for (let i = 0; i < 5; i++)
        await store.append(benchKey(i * 97), [userMessage(`a ${RARE} flower, number ${i}`)], {
          init: BENCH_INIT,
        });
      const samples = ctx.quick ? 50 : 200;
      return {
        messages: sessions * PER_SESSION,
        sessions,
        buildSec: buildMs / 1000,
        ...(await queryLatencies(store, samples)),
      };
    } finally {
      await store.close();
    }
  } finally {
    await cluster.remove();
  }
}

export const postgresSearchBench: Bench<PgSearchResult> = {
  name: "search on PostgreSQL (tsvector GIN + pg_trgm, 1,000,000 messages in 10,000 sessions; --quick: 100,000 in 1,000)",
  run,
  rows(r): Row[] {
    return [
      {
        figure: "messages / sessions (bulk build, s)",
        value: `${int(r.messages)} / ${int(r.sessions)}`,
        baseline: "",
        ratio: fixed(r.buildSec, 1),
        checks: [],
      },
      ...queryRows(r),
    ];
  },
};
