import { join } from "node:path";
import { assembleContext } from "../src/context/index.js";
import type { EntryInput } from "../src/model/entry.js";
import { estimateTokens } from "../src/model/entry.js";
import { openStore } from "../src/store/open.js";
import type { Store } from "../src/store/store.js";
import type { Bench, BenchContext, Check, Row } from "./report.js";
import { fixed, int, ratioText } from "./report.js";
import { BENCH_INIT, benchKey, messageContents, nowMs, percentile } from "./support.js";

export interface ContextAssemblyResult {
  longEntries: number;
  compactions: number;
  shortEntries: number;
  buildSec: number;
  /** Entries each loaded context held (the long one also has its summary). */
  longContextEntries: number;
  shortContextEntries: number;
  /** Messages `assembleContext` returned, system and summary included. */
  longMessages: number;
  shortMessages: number;
  samples: number;
  longP50Ms: number;
  longP99Ms: number;
  shortP50Ms: number;
  shortP99Ms: number;
}

/** A compaction every this many entries; the last keeps KEEP messages and AFTER more arrive after it. */
const EVERY = 5_000;
const KEEP = 20;
const AFTER = 30;
const SHORT = 100;
const BATCH = 1_000;
const MAX_RATIO = 2;

const USER = messageContents(997, 200, 11);
const ASSISTANT = messageContents(997, 600, 13);
const SUMMARY = messageContents(1, 1_500, 17)[0] ?? "";
const INSTRUCTIONS = messageContents(1, 2_000, 19)[0] ?? "";

/** The i-th message of a chat: user and assistant in turn. */
function message(i: number): EntryInput {
  return i % 2 === 0
    ? { type: "message", role: "user", content: USER[(i / 2) % USER.length] ?? "" }
    : { type: "message", role: "assistant", content: ASSISTANT[((i - 1) / 2) % ASSISTANT.length] ?? "" };
}

/**
 * `total` entries through the store: messages, with a compaction every EVERY entries placed so that
 * the last one is entry `total - AFTER`. Each compaction summarises 1..firstKeptSeq-1 and keeps from the
 * user message KEEP messages before it. Returns how many compactions it wrote.
 */
async function writeSession(store: Store, key: string, total: number, compact: boolean): Promise<number> {
  const compactionAt = new Set<number>();
  if (compact) for (let s = total - AFTER; s > KEEP + 1; s -= EVERY) compactionAt.add(s);
  const messageSeqs: number[] = [];
  const messageTokens: number[] = [];
  /** Index of the first message in the context (after the latest compaction). */
  let contextFrom = 0;
  let batch: EntryInput[] = [];
  const tokensFrom = (from: number) => messageTokens.slice(from).reduce((a, b) => a + b, 0);
  for (let seq = 1; seq <= total; seq++) {
    if (compactionAt.has(seq)) {
      let kept = messageSeqs.length - KEEP;
      if (kept % 2 === 1) kept--; // keep from a user message (even index)
      const firstKeptSeq = messageSeqs[kept] ?? 1;
      const summaryTokens = estimateTokens(SUMMARY);
      batch.push({
        type: "compaction",
        summary: SUMMARY,
        fromSeq: 1,
        throughSeq: firstKeptSeq - 1,
        firstKeptSeq,
        tokensBefore: (contextFrom > 0 ? summaryTokens : 0) + tokensFrom(contextFrom),
        tokensAfter: summaryTokens + tokensFrom(kept),
        summarizer: "offline",
      });
      contextFrom = kept;
    } else {
      const input = message(messageSeqs.length);
      messageSeqs.push(seq);
      messageTokens.push(input.type === "message" ? estimateTokens(input.content) : 0);
      batch.push(input);
    }
    if (batch.length >= BATCH || seq === total) {
      await store.append(key, batch, { init: BENCH_INIT });
      batch = [];
    }
  }
  return compactionAt.size;
}

async function build(path: string, longEntries: number): Promise<number> {
  const store = await openStore({ backend: "sqlite", path, durability: "relaxed" });
  try {
    await writeSession(store, benchKey(1), SHORT, false);
    return await writeSession(store, benchKey(0), longEntries, true);
  } finally {
    await store.close();
  }
}

/** The per-turn path: load the context, assemble the prompt. */
async function turn(store: Store, key: string): Promise<{ entries: number; messages: number }> {
  const context = await store.loadContext(key);
  if (!context) throw new Error(`loadContext(${key}) found nothing`);
  const assembled = assembleContext({
    instructions: INSTRUCTIONS,
    summary: context.summary,
    entries: context.entries,
  });
  return { entries: context.entries.length, messages: assembled.messages.length };
}

async function run(ctx: BenchContext): Promise<ContextAssemblyResult> {
  const longEntries = 100_000;
  const samples = ctx.quick ? 1_000 : 5_000;
  const warmup = ctx.quick ? 200 : 1_000;
  const path = join(ctx.dir, "assembly.db");
  ctx.log(`assembly: writing ${int(longEntries)} + ${SHORT} entries through the store (relaxed)`);
  const t0 = nowMs();
  const compactions = await build(path, longEntries);
  const buildSec = (nowMs() - t0) / 1000;
  ctx.log(`assembly: built in ${fixed(buildSec, 1)} s, ${compactions} compactions in the long session`);

  const store = await openStore({ backend: "sqlite", path, durability: "relaxed" });
  try {
    const long = await turn(store, benchKey(0));
    const short = await turn(store, benchKey(1));
    const check = await store.loadContext(benchKey(0));
    if (check?.summary === undefined || check.session.entryCount !== longEntries) {
      throw new Error("assembly: the long session has no summary or the wrong entry count");
    }
    if (long.entries < KEEP + AFTER || long.entries > KEEP + AFTER + 1 || short.entries !== SHORT) {
      throw new Error(`assembly: contexts hold ${long.entries} / ${short.entries} entries`);
    }
    const longTimes: number[] = [];
    const shortTimes: number[] = [];
    // Interleaved, so that both see the same cache, GC and CPU state.
    for (let i = 0; i < warmup + samples; i++) {
      for (const [key, times] of [
        [benchKey(0), longTimes],
        [benchKey(1), shortTimes],
      ] as const) {
        const start = nowMs();
        await turn(store, key);
        if (i >= warmup) times.push(nowMs() - start);
      }
    }
    longTimes.sort((a, b) => a - b);
    shortTimes.sort((a, b) => a - b);
    return {
      longEntries,
      compactions,
      shortEntries: SHORT,
      buildSec,
      longContextEntries: long.entries,
      shortContextEntries: short.entries,
      longMessages: long.messages,
      shortMessages: short.messages,
      samples,
      longP50Ms: percentile(longTimes, 50),
      longP99Ms: percentile(longTimes, 99),
      shortP50Ms: percentile(shortTimes, 50),
      shortP99Ms: percentile(shortTimes, 99),
    };
  } finally {
    await store.close();
  }
}

function withinRatio(ratio: number): Check {
  return { target: `<= ${MAX_RATIO.toFixed(2)}x`, pass: ratio <= MAX_RATIO };
}

export const contextAssembly: Bench<ContextAssemblyResult> = {
  name: "context assembly: loadContext + assembleContext, long vs short session",
  run,
  rows(r): Row[] {
    return [
      {
        figure: "session entries / compactions (baseline: short)",
        value: `${int(r.longEntries)} / ${r.compactions}`,
        baseline: `${int(r.shortEntries)} / 0`,
        ratio: "",
        checks: [],
      },
      {
        figure: "entries in context (-> messages assembled)",
        value: `${int(r.longContextEntries)}+summary -> ${r.longMessages}`,
        baseline: `${int(r.shortContextEntries)} -> ${r.shortMessages}`,
        ratio: "",
        checks: [],
      },
      {
        figure: "per-turn context p50 (ms), long vs short",
        value: fixed(r.longP50Ms, 3),
        baseline: fixed(r.shortP50Ms, 3),
        ratio: ratioText(r.longP50Ms / r.shortP50Ms),
        checks: [withinRatio(r.longP50Ms / r.shortP50Ms)],
      },
      {
        figure: "per-turn context p99 (ms), long vs short",
        value: fixed(r.longP99Ms, 3),
        baseline: fixed(r.shortP99Ms, 3),
        ratio: ratioText(r.longP99Ms / r.shortP99Ms),
        checks: [withinRatio(r.longP99Ms / r.shortP99Ms)],
      },
    ];
  },
};
