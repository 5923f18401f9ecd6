import { join } from "node:path";
import Database from "better-sqlite3";
import { openStore } from "../src/store/open.js";
import type { Store } from "../src/store/store.js";
import { buildStore } from "./bulk-build.js";
import type { Bench, BenchContext, Row } from "./report.js";
import { atMost, fixed, int, ratioText } from "./report.js";
import { BENCH_INIT, benchKey, databaseBytes, percentile, random, userMessage } from "./support.js";

export interface ForkResult {
  entries: number;
  forks: number;
  headP50Ms: number;
  headP99Ms: number;
  midP50Ms: number;
  midP99Ms: number;
  rewindP99Ms: number;
  /** Baseline: a new session with one message, the cheapest write that makes a session. */
  newSessionP50Ms: number;
  newSessionP99Ms: number;
  bytesPerFork: number;
  bytesPerNewSession: number;
}

const ENTRIES = 100_000;

/** The file's size with everything checkpointed into it. */
function checkpointedBytes(path: string): number {
  const db = new Database(path);
  db.pragma("wal_checkpoint(TRUNCATE)");
  db.close();
  return databaseBytes(path);
}

async function timed(times: number[], work: () => Promise<unknown>): Promise<void> {
  const start = performance.now();
  await work();
  times.push(performance.now() - start);
}

const sorted = (times: number[]) => Float64Array.from(times).sort();

async function run(ctx: BenchContext): Promise<ForkResult> {
  const path = join(ctx.dir, "fork.db");
  const forks = ctx.quick ? 300 : 2_000;
  ctx.log(`fork: building one session of ${int(ENTRIES)} entries`);
  await buildStore(path, 1, ENTRIES);
  const parent = benchKey(0);
  const open = () => openStore({ backend: "sqlite", path });
  const draw = random(7);

  let store: Store = await open();
  for (let i = 0; i < 50; i++) await store.fork(parent, { toKey: `warm/${i}` });
  await store.close();

  // Storage: forks at the head, and as the baseline as many new one-message sessions, each from a
  // checkpointed file.
  const before = checkpointedBytes(path);
  store = await open();
  const head: number[] = [];
  for (let i = 0; i < forks; i++) await timed(head, () => store.fork(parent, { toKey: `fork/${i}` }));
  await store.close();
  const afterForks = checkpointedBytes(path);
  store = await open();
  const fresh: number[] = [];
  for (let i = 0; i < forks; i++)
    await timed(fresh, () => store.append(`new/${i}`, [userMessage("hello")], { init: BENCH_INIT }));
  await store.close();
  const afterNew = checkpointedBytes(path);

  store = await open();
  const mid: number[] = [];
  for (let i = 0; i < Math.min(forks, 300); i++) {
    const atSeq = 1 + Math.floor(draw() * (ENTRIES - 1));
    await timed(mid, () => store.fork(parent, { toKey: `mid/${i}`, atSeq }));
  }
  const rewinds: number[] = [];
  for (let i = 0; i < 100; i++) {
    const key = `fork/${i}`;
    await store.append(key, [userMessage("more")]);
    await timed(rewinds, () => store.rewind(key, { toSeq: ENTRIES + 1 }));
  }
  await store.close();

  const h = sorted(head);
  const m = sorted(mid);
  const f = sorted(fresh);
  return {
    entries: ENTRIES,
    forks,
    headP50Ms: percentile(h, 50),
    headP99Ms: percentile(h, 99),
    midP50Ms: percentile(m, 50),
    midP99Ms: percentile(m, 99),
    rewindP99Ms: percentile(sorted(rewinds), 99),
    newSessionP50Ms: percentile(f, 50),
    newSessionP99Ms: percentile(f, 99),
    bytesPerFork: (afterForks - before) / forks,
    bytesPerNewSession: (afterNew - afterForks) / forks,
  };
}

export const forkBench: Bench<ForkResult> = {
  name: "fork and rewind on a session of 100,000 entries (SQLite, strict)",
  run,
  rows(r): Row[] {
    return [
      {
        figure: `fork at the head p50 / p99 (ms), ${int(r.forks)} forks (baseline: a new session's first append)`,
        value: `${fixed(r.headP50Ms, 2)} / ${fixed(r.headP99Ms, 2)}`,
        baseline: `${fixed(r.newSessionP50Ms, 2)} / ${fixed(r.newSessionP99Ms, 2)}`,
        ratio: ratioText(r.headP99Ms / r.newSessionP99Ms),
        checks: [atMost(r.headP99Ms, 5, "5 ms")],
      },
      {
        figure: "fork at a random entry p50 / p99 (ms): counts read from the shorter side",
        value: `${fixed(r.midP50Ms, 2)} / ${fixed(r.midP99Ms, 2)}`,
        baseline: "",
        ratio: ratioText(r.midP99Ms / r.newSessionP99Ms),
        checks: [],
      },
      {
        figure: "rewind of the newest entry p99 (ms)",
        value: fixed(r.rewindP99Ms, 2),
        baseline: "",
        ratio: "",
        checks: [],
      },
      {
        figure: "storage per fork (bytes) (baseline: a new one-message session)",
        value: int(r.bytesPerFork),
        baseline: int(r.bytesPerNewSession),
        ratio: ratioText(r.bytesPerFork / r.bytesPerNewSession),
        checks: [atMost(r.bytesPerFork, 1024, "1 KB")],
      },
    ];
  },
};
