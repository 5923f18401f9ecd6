import { join } from "node:path";
import { newId } from "../src/model/ids.js";
import { openStore } from "../src/store/open.js";
import { SqliteStore } from "../src/store/sqlite/sqlite-store.js";
import type { Bench, BenchContext, Row } from "./report.js";
import { atLeast, fixed, int, ratioText } from "./report.js";
import {
  BENCH_INIT,
  benchKey,
  INSERT_ENTRY_SQL,
  mean,
  messageContents,
  nowMs,
  openRaw,
  percentile,
  userMessage,
} from "./support.js";

export interface AppendResult {
  sessions: number;
  appends: number;
  /** Store and baseline run alternately, this many times each, on fresh files; rates are totals / total time. */
  rounds: number;
  appendsPerSec: number;
  baselineRowsPerSec: number;
  ratio: number;
  /**
   * The same baseline with every row appended to one session's tail (keys in append order): each
   * transaction then dirties a handful of pages instead of one per session. Concurrent only.
   */
  appendOrderRowsPerSec?: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  /** Mean size of the store's commit batches (its last 1,000). */
  meanBatchSize: number;
}

const CONTENTS = messageContents(1000);

function content(i: number): string {
  return CONTENTS[i % CONTENTS.length] ?? "";
}

interface Timed {
  count: number;
  ms: number;
}

/**
 * Appends through `openStore` (strict durability): `sessions` writers, each awaiting its own appends
 * one at a time, all running at once. Each session's first append (which creates it) is not timed.
 */
async function storeRound(
  path: string,
  sessions: number,
  perSession: number,
  latencies: number[],
  batchSizes: number[],
): Promise<Timed> {
  const store = await openStore({ backend: "sqlite", path });
  try {
    const keys = Array.from({ length: sessions }, (_, s) => benchKey(s));
    await Promise.all(
      keys.map((key, s) => store.append(key, [userMessage(content(s))], { init: BENCH_INIT })),
    );
    const start = nowMs();
    await Promise.all(
      keys.map(async (key, s) => {
        for (let i = 1; i <= perSession; i++) {
          const t0 = nowMs();
          await store.append(key, [userMessage(content(s * 31 + i))], { init: BENCH_INIT });
          latencies.push(nowMs() - t0);
        }
      }),
    );
    const ms = nowMs() - start;
    if (store instanceof SqliteStore) batchSizes.push(...store.recentBatchSizes());
    return { count: sessions * perSession, ms };
  } finally {
    await store.close();
  }
}

/**
 * The baseline: raw better-sqlite3, WAL, synchronous=FULL, into the store's own entries table, rows of
 * the same shape (ULID, JSON body) built inside the loop, `perTxn` rows per transaction.
 */
function baselineRound(path: string, sessions: number, total: number, perTxn: number): Timed {
  return rawRound(path, sessions, total, perTxn, false);
}

/** `appendOrder`: all rows go to one session, so the keys are inserted in ascending order. */
function rawRound(
  path: string,
  sessions: number,
  total: number,
  perTxn: number,
  appendOrder: boolean,
): Timed {
  const db = openRaw(path, "FULL");
  try {
    const insert = db.prepare(INSERT_ENTRY_SQL);
    const seqs = new Array<number>(sessions).fill(0);
    let n = 0;
    const txn = db.transaction((count: number) => {
      for (let j = 0; j < count; j++, n++) {
        const s = appendOrder ? 0 : n % sessions;
        const seq = (seqs[s] ?? 0) + 1;
        seqs[s] = seq;
        const ts = Date.now();
        const body = JSON.stringify(userMessage(content(s * 31 + seq)));
        insert.run(s + 1, seq, newId(ts), ts, "message", null, body);
      }
    });
    const start = nowMs();
    for (let done = 0; done < total; done += perTxn) txn(Math.min(perTxn, total - done));
    return { count: total, ms: nowMs() - start };
  } finally {
    db.close();
  }
}

async function measure(
  ctx: BenchContext,
  name: string,
  sessions: number,
  appends: number,
  perTxn: number,
  appendOrder: boolean,
): Promise<AppendResult> {
  const rounds = ctx.quick ? 2 : 3;
  const perSession = Math.max(1, Math.round(appends / rounds / sessions));
  const latencies: number[] = [];
  const batchSizes: number[] = [];
  const store: Timed = { count: 0, ms: 0 };
  const base: Timed = { count: 0, ms: 0 };
  const ordered: Timed = { count: 0, ms: 0 };
  for (let r = 0; r < rounds; r++) {
    const b = baselineRound(join(ctx.dir, `${name}-base-${r}.db`), sessions, sessions * perSession, perTxn);
    base.count += b.count;
    base.ms += b.ms;
    const s = await storeRound(
      join(ctx.dir, `${name}-store-${r}.db`),
      sessions,
      perSession,
      latencies,
      batchSizes,
    );
    store.count += s.count;
    store.ms += s.ms;
    if (appendOrder) {
      const o = rawRound(
        join(ctx.dir, `${name}-ordered-${r}.db`),
        sessions,
        sessions * perSession,
        perTxn,
        true,
      );
      ordered.count += o.count;
      ordered.ms += o.ms;
    }
    ctx.log(
      `${name} round ${r + 1}/${rounds}: store ${int((s.count / s.ms) * 1000)}/s, baseline ${int((b.count / b.ms) * 1000)}/s`,
    );
  }
  latencies.sort((a, b) => a - b);
  const appendsPerSec = (store.count / store.ms) * 1000;
  const baselineRowsPerSec = (base.count / base.ms) * 1000;
  const result: AppendResult = {
    sessions,
    appends: store.count,
    rounds,
    appendsPerSec,
    baselineRowsPerSec,
    ratio: appendsPerSec / baselineRowsPerSec,
    latencyP50Ms: percentile(latencies, 50),
    latencyP99Ms: percentile(latencies, 99),
    meanBatchSize: mean(batchSizes),
  };
  if (appendOrder) result.appendOrderRowsPerSec = (ordered.count / ordered.ms) * 1000;
  return result;
}

export const concurrentAppends: Bench<AppendResult> = {
  name: "concurrent durable appends (100 sessions, strict)",
  run: (ctx) => measure(ctx, "concurrent", 100, ctx.quick ? 20_000 : 200_000, 100, true),
  rows(r): Row[] {
    return [
      {
        figure: "appends/s (baseline: 100 rows/txn, FULL)",
        value: int(r.appendsPerSec),
        baseline: int(r.baselineRowsPerSec),
        ratio: ratioText(r.ratio),
        checks: [atLeast(r.appendsPerSec, 30_000, "30,000/s"), atLeast(r.ratio, 0.7, "0.70x")],
      },
      {
        figure: "  baseline with append-order keys",
        value: "",
        baseline: int(r.appendOrderRowsPerSec ?? Number.NaN),
        ratio: ratioText(r.appendsPerSec / (r.appendOrderRowsPerSec ?? Number.NaN)),
        checks: [],
      },
      {
        figure: "mean commit batch (appends)",
        value: fixed(r.meanBatchSize, 1),
        baseline: "100",
        ratio: "",
        checks: [],
      },
      {
        figure: "append latency p50 / p99 (ms)",
        value: `${fixed(r.latencyP50Ms, 2)} / ${fixed(r.latencyP99Ms, 2)}`,
        baseline: "",
        ratio: "",
        checks: [],
      },
    ];
  },
};

export const sequentialAppends: Bench<AppendResult> = {
  name: "sequential durable appends (1 session, strict)",
  run: (ctx) => measure(ctx, "sequential", 1, ctx.quick ? 2_000 : 10_000, 1, false),
  rows(r): Row[] {
    return [
      {
        figure: "appends/s (baseline: 1 row/txn, FULL)",
        value: int(r.appendsPerSec),
        baseline: int(r.baselineRowsPerSec),
        ratio: ratioText(r.ratio),
        checks: [atLeast(r.ratio, 0.8, "0.80x")],
      },
      {
        figure: "append latency p50 / p99 (ms)",
        value: `${fixed(r.latencyP50Ms, 2)} / ${fixed(r.latencyP99Ms, 2)}`,
        baseline: "",
        ratio: "",
        checks: [],
      },
    ];
  },
};
