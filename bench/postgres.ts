/**
 * The PostgreSQL store on a throwaway cluster (bench/postgres-cluster.ts; fsync on), in one run:
 * - in alternated rounds (medians, and the range of the rounds' ratios): durable appends/s from 100 concurrent sessions beside raw `INSERT … SELECT FROM unnest` transactions
 *   of 100 rows (synchronous commit) into a table shaped like `entries`, on the same server;
 * - the same appends with the search index beside a database whose indexes were dropped;
 * - the lease's cost per turn: p50 of an echo turn through the engine on postgres (lease taken, fenced
 *   appends, released) beside the same turn on SQLite;
 * - CPU per turn of `sessiond serve` (echo runtime) with one gateway, and with two on one database.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { createEngine } from "../src/engine.js";
import { PostgresStore } from "../src/store/postgres/postgres-store.js";
import { startPostgres } from "./postgres-cluster.js";
import type { Bench, BenchContext, Row } from "./report.js";
import { atLeast, atMost, fixed, int, ratioText } from "./report.js";
import { BENCH_INIT, benchKey, messageContents, nowMs, percentile, userMessage } from "./support.js";
import { cpuBetween, cpuOf } from "./thread-cpu.js";

export interface PostgresResult {
  /** Medians over alternated rounds (raw, indexed, unindexed in each), and the per-round ratios' range. */
  appendsPerSec: number;
  rawRowsPerSec: number;
  appendRatio: number;
  appendRatioRange: [number, number];
  unindexedAppendsPerSec: number;
  indexRatio: number;
  indexRatioRange: [number, number];
  turnP50Postgres: number;
  turnP50Sqlite: number;
  cpuPerTurnOneMs: number;
  cpuPerTurnTwoMs: number;
  turnsPerSecOne: number;
  turnsPerSecTwo: number;
}

const CONTENTS = messageContents(1000);

function median(values: readonly number[]): number {
  return percentile(
    [...values].sort((a, b) => a - b),
    50,
  );
}

/** The median ratio of the rounds and their range. */
const rangeText = (m: number, [low, high]: [number, number]) =>
  `${ratioText(m)} (${low.toFixed(2)}-${high.toFixed(2)})`;
const SESSIONS = 100;
const CLI = fileURLToPath(new URL("../src/cli/main.js", import.meta.url));

async function storeAppends(url: string, perSession: number): Promise<number> {
  const store = await PostgresStore.open({ url });
  try {
    const keys = Array.from({ length: SESSIONS }, (_, s) => benchKey(s));
    await Promise.all(
      keys.map((key, s) => store.append(key, [userMessage(CONTENTS[s]!)], { init: BENCH_INIT })),
    );
    const start = nowMs();
    await Promise.all(
      keys.map(async (key, s) => {
        for (let i = 1; i <= perSession; i++) {
          await store.append(key, [userMessage(CONTENTS[(s * 31 + i) % CONTENTS.length]!)], {
            init: BENCH_INIT,
          });
        }
      }),
    );
    return (SESSIONS * perSession * 1000) / (nowMs() - start);
  } finally {
    await store.close();
  }
}

/**
 * A migrated database without the search index: its GIN indexes dropped (the words, computed by this
 * process, are still sent and stored: what the comparison leaves out is the server's indexing).
 */
async function withoutSearch(url: string): Promise<string> {
  await (await PostgresStore.open({ url })).close();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query("DROP INDEX IF EXISTS entries_search_grams; DROP INDEX entries_search_words");
  } finally {
    await client.end();
  }
  return url;
}

/** The baseline: what the server does with the same rows at best, 100 per transaction. */
async function rawUnnest(url: string, transactions: number): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`CREATE TABLE raw_entries (sid bigint, seq integer, id text COLLATE "C", ts bigint,
      type text, idem_key text, data text, PRIMARY KEY (sid, seq))`);
    const start = nowMs();
    for (let t = 0; t < transactions; t++) {
      const sids = Array.from({ length: SESSIONS }, (_, s) => s);
      const data = sids.map((s) =>
        JSON.stringify({ role: "user", content: CONTENTS[(s * 31 + t) % CONTENTS.length] }),
      );
      await client.query("BEGIN");
      await client.query(
        `INSERT INTO raw_entries SELECT * FROM unnest($1::bigint[], $2::int[], $3::text[], $4::bigint[],
          $5::text[], $6::text[], $7::text[])`,
        [
          sids,
          sids.map(() => t + 1),
          sids.map((s) => `${t}-${s}`),
          sids.map(() => Date.now()),
          sids.map(() => "message"),
          sids.map(() => null),
          data,
        ],
      );
      await client.query("COMMIT");
    }
    return (transactions * SESSIONS * 1000) / (nowMs() - start);
  } finally {
    await client.end();
  }
}

/** `url`: on postgres; absent: on SQLite in `dir`. */
async function turnP50(dir: string, url: string | undefined, turns: number): Promise<number> {
  const engine = await createEngine({
    dataDir: dir,
    store: url ? { backend: "postgres", url } : { backend: "sqlite", path: join(dir, "bench.db") },
    titles: { enabled: false },
  });
  try {
    const times: number[] = [];
    for (let i = 0; i < turns; i++) {
      const t0 = nowMs();
      await engine.turnWith(
        { channel: "telegram", chat: { type: "direct", id: "1" }, sender: { id: "1" }, text: `turn ${i}` },
        async (context) => `echo: ${context.input.content}`,
      );
      if (i >= 20) times.push(nowMs() - t0);
    }
    return median(times);
  } finally {
    await engine.close();
  }
}

async function serve(url: string, dir: string): Promise<{ child: ChildProcess; base: string }> {
  mkdirSync(dir, { recursive: true });
  const child = spawn(process.execPath, [CLI, "serve", "--port", "0"], {
    cwd: dir,
    env: {
      ...process.env,
      SESSIOND_STORE: "postgres",
      SESSIOND_DATABASE_URL: url,
      SESSIOND_TOKEN: "bench-token-0123456789",
      SESSIOND_DATA_DIR: dir,
      SESSIOND_CONFIG: "",
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const base = await new Promise<string>((resolve, reject) => {
    let text = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      text += chunk.toString();
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(text);
      if (match) resolve(match[1]!);
    });
    child.on("exit", (code) => reject(new Error(`serve exited ${code}: ${text}`)));
  });
  return { child, base };
}

/**
 * CPU (all threads, every gateway) per turn and turns/s: `turns` echo turns from 20 clients on their own
 * keys, spread over the gateways.
 */
async function cpuPerTurn(
  url: string,
  dir: string,
  gateways: number,
  turns: number,
): Promise<{ cpuMs: number; turnsPerSec: number }> {
  const started = await Promise.all(
    Array.from({ length: gateways }, (_, g) => serve(url, join(dir, `gw${gateways}-${g}`))),
  );
  try {
    const chat = (g: number, client: number, i: number) =>
      fetch(`${started[g]!.base}/api/chat`, {
        method: "POST",
        headers: { authorization: "Bearer bench-token-0123456789", "content-type": "application/json" },
        body: JSON.stringify({ message: `m${i}`, session_id: `admin-${gateways}-${client}` }),
      }).then((r) => r.text());
    const drive = async (count: number) => {
      let next = 0;
      await Promise.all(
        Array.from({ length: 20 }, async (_, client) => {
          while (next < count) {
            const i = next++;
            await chat(i % gateways, client, i);
          }
        }),
      );
    };
    await drive(100);
    const before = started.map((s) => cpuOf(s.child.pid!));
    const startedAt = performance.now();
    await drive(turns);
    const seconds = (performance.now() - startedAt) / 1000;
    const used = started.reduce(
      (sum, s, i) => sum + (cpuBetween(before[i], cpuOf(s.child.pid!))?.allMs ?? Number.NaN),
      0,
    );
    return { cpuMs: used / turns, turnsPerSec: turns / seconds };
  } finally {
    for (const s of started) s.child.kill("SIGKILL");
  }
}

export const postgresBench: Bench<PostgresResult> = {
  name: "PostgreSQL store",
  async run(ctx: BenchContext) {
    const cluster = await startPostgres();
    try {
      const perSession = ctx.quick ? 20 : 100;
      const rounds = ctx.quick ? 3 : 5;
      const raw: number[] = [];
      const indexed: number[] = [];
      const unindexed: number[] = [];
      for (let r = 0; r < rounds; r++) {
        ctx.log(
          `postgres: round ${r + 1}/${rounds}: raw unnest, durable appends, appends without the search index`,
        );
        raw.push(await rawUnnest(await cluster.createDatabase(), perSession));
        indexed.push(await storeAppends(await cluster.createDatabase(), perSession));
        unindexed.push(await storeAppends(await withoutSearch(await cluster.createDatabase()), perSession));
      }
      const appendRatios = indexed.map((v, i) => v / raw[i]!);
      const indexRatios = indexed.map((v, i) => v / unindexed[i]!);
      ctx.log("postgres: echo turns on postgres and on sqlite");
      const turns = ctx.quick ? 100 : 400;
      const turnP50Postgres = await turnP50(join(ctx.dir, "turns-pg"), await cluster.createDatabase(), turns);
      const turnP50Sqlite = await turnP50(join(ctx.dir, "turns-sqlite"), undefined, turns);
      ctx.log("postgres: CPU per turn with one and two gateways");
      const gwTurns = ctx.quick ? 500 : 2000;
      const one = await cpuPerTurn(await cluster.createDatabase(), ctx.dir, 1, gwTurns);
      const two = await cpuPerTurn(await cluster.createDatabase(), ctx.dir, 2, gwTurns);
      return {
        appendsPerSec: median(indexed),
        rawRowsPerSec: median(raw),
        appendRatio: median(appendRatios),
        appendRatioRange: [Math.min(...appendRatios), Math.max(...appendRatios)],
        unindexedAppendsPerSec: median(unindexed),
        indexRatio: median(indexRatios),
        indexRatioRange: [Math.min(...indexRatios), Math.max(...indexRatios)],
        turnP50Postgres,
        turnP50Sqlite,
        cpuPerTurnOneMs: one.cpuMs,
        cpuPerTurnTwoMs: two.cpuMs,
        turnsPerSecOne: one.turnsPerSec,
        turnsPerSecTwo: two.turnsPerSec,
      };
    } finally {
      await cluster.remove();
    }
  },
  rows(r): Row[] {
    return [
      {
        figure: "postgres: durable appends/s, 100 sessions (vs raw unnest, 100 rows/txn)",
        value: int(r.appendsPerSec),
        baseline: int(r.rawRowsPerSec),
        ratio: rangeText(r.appendRatio, r.appendRatioRange),
        checks: [atLeast(r.appendRatio, 0.7, "0.70x baseline")],
      },
      {
        figure: "postgres: durable appends/s with the search index (vs without it)",
        value: int(r.appendsPerSec),
        baseline: int(r.unindexedAppendsPerSec),
        ratio: rangeText(r.indexRatio, r.indexRatioRange),
        checks: [atLeast(r.indexRatio, 0.75, "0.75x without")],
      },
      {
        figure: "postgres: p50 echo turn with its lease (vs the same turn on SQLite)",
        value: `${fixed(r.turnP50Postgres, 2)} ms`,
        baseline: `${fixed(r.turnP50Sqlite, 2)} ms`,
        ratio: ratioText(r.turnP50Postgres / r.turnP50Sqlite),
        checks: [atMost(r.turnP50Postgres / r.turnP50Sqlite, 2, "2x SQLite")],
      },
      {
        figure: "postgres: gateway CPU per turn, two gateways (vs one)",
        value: `${fixed(r.cpuPerTurnTwoMs, 2)} ms`,
        baseline: `${fixed(r.cpuPerTurnOneMs, 2)} ms`,
        ratio: ratioText(r.cpuPerTurnTwoMs / r.cpuPerTurnOneMs),
        checks: [atMost(r.cpuPerTurnTwoMs / r.cpuPerTurnOneMs, 1.2, "1.2x one")],
      },
      {
        figure: "postgres: echo turns/s over /api/chat, two gateways (vs one)",
        value: int(r.turnsPerSecTwo),
        baseline: int(r.turnsPerSecOne),
        ratio: ratioText(r.turnsPerSecTwo / r.turnsPerSecOne),
        checks: [],
      },
    ];
  },
};
