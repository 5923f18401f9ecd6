import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { makeEntry } from "../src/model/entry.js";
import { openEntry, sealEntry } from "../src/store/encryption/sealed-entries.js";
import { SqliteStore } from "../src/store/sqlite/sqlite-store.js";
import type { Bench, BenchContext, Row } from "./report.js";
import { atLeast, fixed, int, ratioText } from "./report.js";
import { concurrentWriters, messageContents, nowMs, userMessage } from "./support.js";

/** Durable appends on SQLite with encryption at rest against the same appends without, in the same run. */
export interface SealedAppendsResult {
  rounds: number;
  concurrent: { sealedPerSec: number; plainPerSec: number; ratio: number };
  sequential: { sealedPerSec: number; plainPerSec: number; ratio: number };
  /** CPU per entry to seal it and to open it again (µs), on this thread. */
  sealMicros: number;
  openMicros: number;
}

/** The cost of sealing and opening one message entry, away from the disk. */
function cryptoCost(count: number): { sealMicros: number; openMicros: number } {
  const key = randomBytes(32);
  const entries = Array.from({ length: count }, (_, i) =>
    makeEntry({ id: `01J${i}`, sessionId: "s", seq: i + 1, ts: 0 }, { ...userMessage(content(i)) }),
  );
  let start = nowMs();
  const sealed = entries.map((e) => sealEntry(key, e));
  const sealMicros = ((nowMs() - start) * 1000) / count;
  start = nowMs();
  for (const e of sealed) openEntry(key, e, "s");
  return { sealMicros, openMicros: ((nowMs() - start) * 1000) / count };
}

const CONTENTS = messageContents(1000);
const content = (i: number) => CONTENTS[i % CONTENTS.length] ?? "";
const KEY = randomBytes(32);

/** Appends per second of `concurrentWriters` (strict durability). */
async function round(path: string, sealed: boolean, sessions: number, perSession: number): Promise<number> {
  const store = new SqliteStore({ path, ...(sealed ? { encryption: { key: KEY } } : {}) });
  try {
    return ((sessions * perSession) / (await concurrentWriters(store, sessions, perSession, content))) * 1000;
  } finally {
    await store.close();
  }
}

/** Alternating rounds (plain, sealed, plain, ...) on fresh files; each rate is the mean of its rounds. */
async function compare(ctx: BenchContext, name: string, sessions: number, appends: number, rounds: number) {
  const perSession = Math.max(1, Math.round(appends / sessions));
  let plain = 0;
  let sealed = 0;
  for (let r = 0; r < rounds; r++) {
    const p = await round(join(ctx.dir, `${name}-plain-${r}.db`), false, sessions, perSession);
    const s = await round(join(ctx.dir, `${name}-sealed-${r}.db`), true, sessions, perSession);
    ctx.log(
      `sealed ${name} round ${r + 1}/${rounds}: plain ${int(p)}/s, sealed ${int(s)}/s (${ratioText(s / p)})`,
    );
    plain += p / rounds;
    sealed += s / rounds;
  }
  return { sealedPerSec: sealed, plainPerSec: plain, ratio: sealed / plain };
}

export const sealedAppends: Bench<SealedAppendsResult> = {
  name: "durable appends with encryption at rest (SQLite, strict; baseline: the same without)",
  async run(ctx) {
    const rounds = ctx.quick ? 3 : 5;
    return {
      ...cryptoCost(20_000),
      rounds,
      concurrent: await compare(ctx, "concurrent", 100, ctx.quick ? 10_000 : 50_000, rounds),
      sequential: await compare(ctx, "sequential", 1, ctx.quick ? 1_000 : 5_000, rounds),
    };
  },
  rows(r): Row[] {
    return [
      {
        figure: "100 sessions at once, appends/s",
        value: int(r.concurrent.sealedPerSec),
        baseline: int(r.concurrent.plainPerSec),
        ratio: ratioText(r.concurrent.ratio),
        checks: [atLeast(r.concurrent.ratio, 0.85, "0.85x")],
      },
      {
        figure: "1 session, appends/s",
        value: int(r.sequential.sealedPerSec),
        baseline: int(r.sequential.plainPerSec),
        ratio: ratioText(r.sequential.ratio),
        checks: [atLeast(r.sequential.ratio, 0.85, "0.85x")],
      },
      {
        figure: "seal / open one message entry (µs of CPU)",
        value: `${fixed(r.sealMicros, 1)} / ${fixed(r.openMicros, 1)}`,
        baseline: "",
        ratio: "",
        checks: [],
      },
    ];
  },
};
