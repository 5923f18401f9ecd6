import { closeSync, fsyncSync, openSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { newId } from "../src/model/ids.js";
import { writeAll } from "../src/store/jsonl/durable-fs.js";
import { JsonlStore } from "../src/store/jsonl/jsonl-store.js";
import type { Bench, BenchContext, Row } from "./report.js";
import { atLeast, fixed, int, ratioText } from "./report.js";
import { BENCH_INIT, benchKey, mean, messageContents, nowMs, percentile, userMessage } from "./support.js";

const CONTENTS = messageContents(1000);
const content = (i: number) => CONTENTS[i % CONTENTS.length] ?? "";

export interface JsonlAppendResult {
  sessions: number;
  appends: number;
  appendsPerSec: number;
  baselineLinesPerSec: number;
  ratio: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  meanBatchSize: number;
}

interface Timed {
  count: number;
  ms: number;
}

/** `sessions` writers at once, each awaiting its own strict appends one at a time; creation not timed. */
async function storeRound(
  dir: string,
  sessions: number,
  perSession: number,
  latencies: number[],
  batches: number[],
) {
  const store = new JsonlStore({ path: dir });
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
          await store.append(key, [userMessage(content(s * 31 + i))]);
          latencies.push(nowMs() - t0);
        }
      }),
    );
    const timed: Timed = { count: sessions * perSession, ms: nowMs() - start };
    batches.push(...store.recentBatchSizes());
    return timed;
  } finally {
    await store.close();
  }
}

/**
 * The baseline: raw appends of lines of the same shape (a message line with seq, ULID and ts, built in
 * the loop) to ONE file, `perWrite` lines per write + fsync.
 */
function rawRound(path: string, total: number, perWrite: number): Timed {
  const fd = openSync(path, "a");
  try {
    const start = nowMs();
    let seq = 0;
    for (let done = 0; done < total; done += perWrite) {
      let text = "";
      for (let j = 0; j < Math.min(perWrite, total - done); j++) {
        seq++;
        const ts = Date.now();
        text += `${JSON.stringify({ role: "user", content: content(seq), seq, id: newId(ts), ts })}\n`;
      }
      writeAll(fd, Buffer.from(text));
      fsyncSync(fd);
    }
    return { count: total, ms: nowMs() - start };
  } finally {
    closeSync(fd);
  }
}

async function measure(ctx: BenchContext, name: string, sessions: number, appends: number, perWrite: number) {
  const rounds = ctx.quick ? 2 : 5;
  const perSession = Math.max(1, Math.round(appends / rounds / sessions));
  const latencies: number[] = [];
  const batches: number[] = [];
  const store: Timed = { count: 0, ms: 0 };
  const base: Timed = { count: 0, ms: 0 };
  // A round of each, not counted, so that neither is measured while its code is still being compiled.
  const warmup = Math.max(1, Math.round(perSession / 4));
  rawRound(join(ctx.dir, `${name}-raw-warmup.jsonl`), sessions * warmup, perWrite);
  await storeRound(join(ctx.dir, `${name}-store-warmup`), sessions, warmup, [], []);
  for (let r = 0; r < rounds; r++) {
    const b = rawRound(join(ctx.dir, `${name}-raw-${r}.jsonl`), sessions * perSession, perWrite);
    base.count += b.count;
    base.ms += b.ms;
    const s = await storeRound(join(ctx.dir, `${name}-store-${r}`), sessions, perSession, latencies, batches);
    store.count += s.count;
    store.ms += s.ms;
    ctx.log(
      `${name} round ${r + 1}/${rounds}: jsonl ${int((s.count / s.ms) * 1000)}/s, raw file ${int((b.count / b.ms) * 1000)}/s`,
    );
  }
  latencies.sort((a, b) => a - b);
  const appendsPerSec = (store.count / store.ms) * 1000;
  const baselineLinesPerSec = (base.count / base.ms) * 1000;
  return {
    sessions,
    appends: store.count,
    appendsPerSec,
    baselineLinesPerSec,
    ratio: appendsPerSec / baselineLinesPerSec,
    latencyP50Ms: percentile(latencies, 50),
    latencyP99Ms: percentile(latencies, 99),
    meanBatchSize: mean(batches),
  };
}

function appendRows(r: JsonlAppendResult, baseline: string, target: number): Row[] {
  return [
    {
      figure: `appends/s (baseline: ${baseline})`,
      value: int(r.appendsPerSec),
      baseline: int(r.baselineLinesPerSec),
      ratio: ratioText(r.ratio),
      checks: [atLeast(r.ratio, target, `${target.toFixed(2)}x`)],
    },
    {
      figure: "mean commit batch (appends)",
      value: fixed(r.meanBatchSize, 1),
      baseline: "",
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
}

export const jsonlConcurrentAppends: Bench<JsonlAppendResult> = {
  name: "JSONL store: concurrent durable appends (100 sessions, strict)",
  run: (ctx) => measure(ctx, "jsonl-concurrent", 100, ctx.quick ? 10_000 : 200_000, 100),
  rows: (r) => appendRows(r, "one file, 100 lines per fsync", 0.7),
};

export const jsonlSequentialAppends: Bench<JsonlAppendResult> = {
  name: "JSONL store: sequential durable appends (1 session, strict)",
  run: (ctx) => measure(ctx, "jsonl-sequential", 1, ctx.quick ? 1_000 : 5_000, 1),
  rows: (r) => appendRows(r, "one file, 1 line per fsync", 0.8),
};

export interface JsonlLoadResult {
  sessions: number;
  entries: number;
  reopenFromIndexMs: number;
  p50Ms: number;
  p99Ms: number;
  baselineP50Ms: number;
}

/** loadContext of a random session not yet in memory, against reading and parsing the same file raw. */
async function load(ctx: BenchContext): Promise<JsonlLoadResult> {
  const sessions = ctx.quick ? 300 : 2_000;
  const perSession = 100;
  const dir = join(ctx.dir, "jsonl-load");
  let store = new JsonlStore({ path: dir, durability: "relaxed" });
  const keys = Array.from({ length: sessions }, (_, s) => benchKey(s));
  await Promise.all(
    keys.map((key, s) =>
      store.append(
        key,
        Array.from({ length: perSession }, (_, i) => userMessage(content(s + i))),
        { init: BENCH_INIT },
      ),
    ),
  );
  await store.close();
  let t0 = nowMs();
  store = new JsonlStore({ path: dir });
  const reopenFromIndexMs = nowMs() - t0;
  const samples = Math.min(sessions, 1000);
  const times: number[] = [];
  for (let i = 0; i < samples; i++) {
    const key = keys[(i * 7919) % sessions]!;
    t0 = nowMs();
    await store.loadContext(key);
    times.push(nowMs() - t0);
  }
  await store.close();
  // The raw baseline: the same files read and every line parsed.
  const names = readdirSync(dir).filter((n) => n.endsWith(".jsonl"));
  const raw: number[] = [];
  for (let i = 0; i < samples; i++) {
    const name = names[(i * 7919) % names.length]!;
    t0 = nowMs();
    const lines = readFileSync(join(dir, name), "utf8").split("\n");
    for (const l of lines) if (l) JSON.parse(l);
    raw.push(nowMs() - t0);
  }
  times.sort((a, b) => a - b);
  raw.sort((a, b) => a - b);
  return {
    sessions,
    entries: sessions * perSession,
    reopenFromIndexMs,
    p50Ms: percentile(times, 50),
    p99Ms: percentile(times, 99),
    baselineP50Ms: percentile(raw, 50),
  };
}

export const jsonlLoad: Bench<JsonlLoadResult> = {
  name: "JSONL store: context load (a session not in memory, 100 messages)",
  run: load,
  rows(r): Row[] {
    return [
      {
        figure: "loadContext p50 / p99 (ms) (baseline: read + parse the file)",
        value: `${fixed(r.p50Ms, 3)} / ${fixed(r.p99Ms, 3)}`,
        baseline: fixed(r.baselineP50Ms, 3),
        ratio: ratioText(r.p50Ms / r.baselineP50Ms),
        checks: [],
      },
      {
        figure: `open ${int(r.sessions)} sessions from the index (ms)`,
        value: fixed(r.reopenFromIndexMs, 1),
        baseline: "",
        ratio: "",
        checks: [],
      },
    ];
  },
};
