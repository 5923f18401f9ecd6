import { copyFileSync, existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import type { SearchQuery } from "../src/search/query.js";
import type { SearchableStore } from "../src/search/searchable.js";
import { SCHEMA_VERSION } from "../src/store/sqlite/schema.js";
import { SqliteStore } from "../src/store/sqlite/sqlite-store.js";
import { buildStore } from "./bulk-build.js";
import type { Bench, BenchContext, Row } from "./report.js";
import { atLeast, below, fixed, int, ratioText } from "./report.js";
import { BENCH_INIT, benchKey, percentile, userMessage } from "./support.js";

export const PER_SESSION = 100;
export const RARE = "zygomorphic";

export interface Latency {
  p50Ms: number;
  p99Ms: number;
  hits: number;
}

/** The four queries every search bench times, on the same corpus. */
export interface QueryLatencies {
  rare: Latency;
  common: Latency;
  phrase: Latency;
  filtered: Latency;
}

export interface SearchBenchResult extends QueryLatencies {
  messages: number;
  sessions: number;
  indexSec: number;
  appendsPerSecIndexed: number;
  appendsPerSecUnindexed: number;
}

/** The bulk-built store's messages indexed in bulk, as the search index would hold them (search-index.ts). */
function indexInBulk(path: string): number {
  const start = performance.now();
  const db = new Database(path);
  db.pragma("synchronous = OFF");
  db.exec(`INSERT INTO search_rows (sid, seq, role, ts, body)
      SELECT sid, seq, data ->> '$.role', ts, data ->> '$.content' FROM entries WHERE type = 'message' ORDER BY sid, seq;
    INSERT INTO search_words (rowid, body) SELECT row, body FROM search_rows;
    INSERT INTO search_sids (sid, row) SELECT sid, row FROM search_rows ORDER BY sid, row;
    UPDATE search_state SET indexed_upto = (SELECT max(row) FROM search_rows);
    INSERT INTO search_words (search_words) VALUES ('optimize');
    CREATE VIRTUAL TABLE temp.vocab USING fts5vocab(main, search_words, row);
    INSERT INTO search_terms (term) SELECT term FROM temp.vocab;
`);
  db.pragma("wal_checkpoint(TRUNCATE)");
  db.close();
  return performance.now() - start;
}

/** p50/p99 of `samples` searches (after 5 not counted), and how many hits the last one had. */
export async function latency(store: SearchableStore, query: SearchQuery, samples: number): Promise<Latency> {
  const times: number[] = [];
  let hits = 0;
  for (let i = 0; i < samples + 5; i++) {
    const start = performance.now();
    const result = await store.search(query);
    if (i >= 5) times.push(performance.now() - start);
    hits = result.hits.length;
  }
  times.sort((a, b) => a - b);
  return { p50Ms: percentile(times, 50), p99Ms: percentile(times, 99), hits };
}

/** Durable appends/s from 100 concurrent sessions of a fresh store, with the index written or skipped. */
async function appendRate(path: string, indexed: boolean, appends: number): Promise<number> {
  const store = new SqliteStore({ path });
  // The bench measures what indexing costs: without it, the driver's index write is a no-op.
  if (!indexed) store.sqlite.searchIndex.add = () => undefined;
  const sessions = 100;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: sessions }, async (_, s) => {
      for (let i = 0; i < appends / sessions; i++)
        await store.append(`k:${s}`, [userMessage(`message ${i} about the meeting notes and the draft`)], {
          init: BENCH_INIT,
        });
    }),
  );
  const ms = performance.now() - start;
  await store.close();
  return (appends / ms) * 1000;
}

/** Built stores are kept here between runs, keyed by schema version and size (git-ignored). */
const CACHE_DIR = join(process.cwd(), "bench", ".cache");

/** Builds the searched store: bulk-built messages, indexed in bulk, plus the rare term's messages. */
async function buildSearchStore(path: string, sessions: number, ctx: BenchContext): Promise<number> {
  ctx.log(`search: building ${int(sessions * PER_SESSION)} messages in ${int(sessions)} sessions`);
  await buildStore(path, sessions, PER_SESSION);
  const indexMs = indexInBulk(path);
  ctx.log(`search: indexed in ${fixed(indexMs / 1000, 1)} s`);
  const store = new SqliteStore({ path });
  for (let i = 0; i < 5; i++)
    await store.append(benchKey(i * 97), [userMessage(`a ${RARE} flower, number ${i}`)], {
      init: BENCH_INIT,
    });
  await store.close();
  return indexMs;
}

/**
 * The searched store, copied from the cache (built there first when missing): building and indexing
 * 1,000,000 messages takes minutes, a copy seconds. Returns the bulk index time, or NaN from the cache.
 */
export async function searchStore(path: string, sessions: number, ctx: BenchContext): Promise<number> {
  const cached = join(CACHE_DIR, `search-v${SCHEMA_VERSION}-${sessions}x${PER_SESSION}.db`);
  let indexMs = Number.NaN;
  if (!existsSync(cached)) {
    mkdirSync(CACHE_DIR, { recursive: true });
    const building = `${cached}.building`;
    for (const suffix of ["", "-wal", "-shm"]) rmSync(building + suffix, { force: true });
    indexMs = await buildSearchStore(building, sessions, ctx);
    const db = new Database(building);
    db.pragma("wal_checkpoint(TRUNCATE)");
    db.close();
    for (const suffix of ["-wal", "-shm"]) rmSync(building + suffix, { force: true });
    renameSync(building, cached);
  } else ctx.log(`search: store from ${cached}`);
  copyFileSync(cached, path);
  return indexMs;
}

async function run(ctx: BenchContext): Promise<SearchBenchResult> {
  const sessions = ctx.quick ? 1_000 : 10_000;
  const path = join(ctx.dir, "search.db");
  const indexMs = await searchStore(path, sessions, ctx);
  const store = new SqliteStore({ path });
  const samples = ctx.quick ? 50 : 200;
  const result = {
    messages: sessions * PER_SESSION,
    sessions,
    indexSec: indexMs / 1000,
    ...(await queryLatencies(store, samples)),
    appendsPerSecIndexed: 0,
    appendsPerSecUnindexed: 0,
  };
  await store.close();
  const appends = ctx.quick ? 5_000 : 20_000;
  // Interleaved, so that both see the same disk and load.
  let on = 0;
  let off = 0;
  for (let r = 0; r < 2; r++) {
    off += await appendRate(join(ctx.dir, `append-off-${r}.db`), false, appends);
    on += await appendRate(join(ctx.dir, `append-on-${r}.db`), true, appends);
  }
  result.appendsPerSecIndexed = on / 2;
  result.appendsPerSecUnindexed = off / 2;
  return result;
}

/** p50/p99 of the four queries, `samples` of each (a p99 of 30 was their slowest). */
export async function queryLatencies(store: SearchableStore, samples: number): Promise<QueryLatencies> {
  return {
    rare: await latency(store, { text: RARE }, samples),
    common: await latency(store, { text: "the" }, samples),
    phrase: await latency(store, { text: '"meeting notes"' }, samples),
    filtered: await latency(store, { text: "meeting", keyPrefix: benchKey(42), role: "user" }, samples),
  };
}

/** The report's rows of the four queries. */
export const queryRows = (r: QueryLatencies): Row[] => [
  latencyRow(`rare term (${RARE})`, r.rare),
  latencyRow("common term (the)", r.common),
  latencyRow('phrase ("meeting notes")', r.phrase),
  latencyRow("filtered (key prefix + role)", r.filtered),
];

export const latencyRow = (name: string, l: Latency): Row => ({
  figure: `${name} p50 / p99 (ms), ${l.hits} hits`,
  value: `${fixed(l.p50Ms, 2)} / ${fixed(l.p99Ms, 2)}`,
  baseline: "",
  ratio: "",
  checks: [below(l.p50Ms, 10, "p50 10 ms"), below(l.p99Ms, 50, "p99 50 ms")],
});

export const searchBench: Bench<SearchBenchResult> = {
  name: "search (SQLite FTS5 + trigram, 1,000,000 messages in 10,000 sessions; --quick: 100,000 in 1,000)",
  run,
  rows(r): Row[] {
    const ratio = r.appendsPerSecIndexed / r.appendsPerSecUnindexed;
    return [
      {
        figure: `messages / sessions (bulk index build, s)`,
        value: `${int(r.messages)} / ${int(r.sessions)}`,
        baseline: "",
        ratio: Number.isNaN(r.indexSec) ? "cached" : fixed(r.indexSec, 1),
        checks: [],
      },
      ...queryRows(r),
      {
        figure: "durable appends/s, 100 sessions (baseline: index skipped)",
        value: int(r.appendsPerSecIndexed),
        baseline: int(r.appendsPerSecUnindexed),
        ratio: ratioText(ratio),
        checks: [atLeast(ratio, 0.75, "0.75x (indexing <= 25%)")],
      },
    ];
  },
};
