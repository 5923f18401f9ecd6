import { join } from "node:path";
import { JsonlStore } from "../src/store/jsonl/jsonl-store.js";
import type { Bench, BenchContext, Row } from "./report.js";
import { atLeast, fixed, int, ratioText } from "./report.js";
import { PER_SESSION, type QueryLatencies, queryLatencies, queryRows, RARE } from "./search.js";
import { BENCH_INIT, benchKey, messageContents, percentile, userMessage } from "./support.js";

const ROUNDS = 3;

export interface JsonlSearchResult extends QueryLatencies {
  messages: number;
  sessions: number;
  /** Rebuilding the whole index from the files (the index removed), seconds. */
  rebuildSec: number;
  /** Durable appends/s with the index and without it, each round's, interleaved in this run. */
  indexed: number[];
  unindexed: number[];
}

/** The searched directory: `sessions` sessions of PER_SESSION messages, a rare term in five of them. */
async function build(dir: string, sessions: number): Promise<void> {
  const contents = messageContents(sessions * PER_SESSION);
  const store = new JsonlStore({ path: dir, durability: "relaxed" });
  for (let s = 0; s < sessions; s++) {
    const messages = contents.slice(s * PER_SESSION, (s + 1) * PER_SESSION).map(userMessage);
    await store.append(benchKey(s), messages, { init: BENCH_INIT });
  }
  for (let i = 0; i < 5; i++)
    await store.append(benchKey(i * 7), [userMessage(`a ${RARE} flower, number ${i}`)]);
  await store.close();
}

/** Seconds until a store opened without its index file has indexed every session again. */
async function rebuild(dir: string): Promise<number> {
  const { rmSync } = await import("node:fs");
  rmSync(join(dir, ".sessiond", "search.db"), { force: true });
  const start = performance.now();
  let done: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => {
    done = resolve;
  });
  const store = new JsonlStore({ path: dir, onIndexProgress: (p) => (p.indexing ? undefined : done()) });
  if (store.searchProgress().indexing) {
    // The rebuild's timer is unref'd (a library must not keep its process alive): this process has nothing
    // else to keep it, so without a handle of its own it would exit with the rebuild still waiting.
    const alive = setInterval(() => undefined, 1000);
    await finished;
    clearInterval(alive);
  }
  const sec = (performance.now() - start) / 1000;
  await store.close();
  return sec;
}

/** Durable appends/s from 100 concurrent sessions of a fresh directory, with the index kept or not. */
async function appendRate(dir: string, searchIndex: boolean, appends: number): Promise<number> {
  const store = new JsonlStore({ path: dir, searchIndex });
  const sessions = 100;
  const contents = messageContents(1000, 200, 7);
  await Promise.all(
    Array.from({ length: sessions }, (_, s) =>
      store.append(benchKey(s), [userMessage("hello")], { init: BENCH_INIT }),
    ),
  );
  const start = performance.now();
  await Promise.all(
    Array.from({ length: sessions }, async (_, s) => {
      for (let i = 0; i < appends / sessions; i++)
        await store.append(benchKey(s), [userMessage(contents[(s * 31 + i) % contents.length]!)]);
    }),
  );
  const ms = performance.now() - start;
  await store.close();
  return (appends / ms) * 1000;
}

async function run(ctx: BenchContext): Promise<JsonlSearchResult> {
  const sessions = ctx.quick ? 50 : 200;
  const dir = join(ctx.dir, "jsonl-search");
  ctx.log(`jsonl search: building ${int(sessions * PER_SESSION)} messages in ${int(sessions)} sessions`);
  await build(dir, sessions);
  const rebuildSec = await rebuild(dir);
  const store = new JsonlStore({ path: dir });
  const samples = ctx.quick ? 30 : 100;
  const result: JsonlSearchResult = {
    messages: sessions * PER_SESSION,
    sessions,
    rebuildSec,
    ...(await queryLatencies(store, samples)),
    indexed: [],
    unindexed: [],
  };
  await store.close();
  const appends = ctx.quick ? 2_000 : 10_000;
  // Interleaved, so that both see the same disk and load.
  for (let r = 0; r < ROUNDS; r++) {
    result.unindexed.push(await appendRate(join(ctx.dir, `jsonl-append-off-${r}`), false, appends));
    result.indexed.push(await appendRate(join(ctx.dir, `jsonl-append-on-${r}`), true, appends));
  }
  return result;
}

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return percentile(sorted, 50);
};

export const jsonlSearchBench: Bench<JsonlSearchResult> = {
  name: "JSONL search (sidecar index, 20,000 messages in 200 sessions; --quick: 5,000 in 50)",
  run,
  rows(r): Row[] {
    const ratios = r.indexed.map((on, i) => on / (r.unindexed[i] ?? on));
    const ratio = median(ratios);
    return [
      {
        figure: "messages / sessions (rebuild from the files, s)",
        value: `${int(r.messages)} / ${int(r.sessions)}`,
        baseline: "",
        ratio: fixed(r.rebuildSec, 1),
        checks: [],
      },
      ...queryRows(r),
      {
        figure: `durable appends/s, 100 sessions, median of ${ROUNDS} (baseline: searchIndex false; ratios ${ratios.map((x) => fixed(x, 2)).join(", ")})`,
        value: int(median(r.indexed)),
        baseline: int(median(r.unindexed)),
        ratio: ratioText(ratio),
        checks: [atLeast(ratio, 0.75, "0.75x (indexing <= 25%)")],
      },
    ];
  },
};
