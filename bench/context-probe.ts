/**
 * The measuring side of the context-load benchmark, run in its own process (forked by context-load.ts)
 * so that its peak RSS is this phase's alone, not the bulk build's or the append benchmarks'.
 * Usage: node context-probe.js <db path> <sessions> <samples> <warmup>
 */
import Database from "better-sqlite3";
import { openStore } from "../src/store/open.js";
import { benchKey, percentile, random } from "./support.js";

export interface ProbeResult {
  samples: number;
  entriesPerLoad: number;
  p50Ms: number;
  p99Ms: number;
  baselineP50Ms: number;
  baselineP99Ms: number;
  /** RSS after start-up, before the database is opened. */
  startRssMb: number;
  /** The highest `process.memoryUsage().rss` sampled during the phase. */
  peakRssSampledMb: number;
  /** `process.resourceUsage().maxRSS` of this process at the end. */
  maxRssMb: number;
}

const MB = 1024 * 1024;

async function probe(path: string, sessions: number, samples: number, warmup: number): Promise<ProbeResult> {
  const startRss = process.memoryUsage().rss;
  let peakRss = startRss;
  const sampleRss = () => {
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
  };
  const timer = setInterval(sampleRss, 5);

  const raw = new Database(path);
  const sidOf = raw.prepare("SELECT sid FROM sessions WHERE key = ? AND state = 'active'");
  const rawEntries = raw.prepare(
    "SELECT seq, id, ts, idem_key, data FROM entries WHERE sid = ? AND seq >= ? ORDER BY seq",
  );
  const next = random(42);
  const picks = Array.from({ length: warmup + samples }, () => {
    const key = benchKey(Math.floor(next() * sessions));
    const row = sidOf.get(key) as { sid: number } | undefined;
    if (!row) throw new Error(`no session for ${key}`);
    return { key, sid: row.sid };
  });

  const store = await openStore({ backend: "sqlite", path });
  const times: number[] = [];
  const baseTimes: number[] = [];
  let entriesPerLoad = 0;
  try {
    for (let i = 0; i < picks.length; i++) {
      const { key, sid } = picks[i] ?? { key: "", sid: 0 };
      const timeStore = async () => {
        const t0 = performance.now();
        const context = await store.loadContext(key);
        const ms = performance.now() - t0;
        if (!context) throw new Error(`loadContext(${key}) found nothing`);
        entriesPerLoad = context.entries.length;
        return ms;
      };
      const timeBase = () => {
        const t0 = performance.now();
        const rows = rawEntries.all(sid, 1);
        const ms = performance.now() - t0;
        if (rows.length === 0) throw new Error(`no entries for sid ${sid}`);
        return ms;
      };
      // Alternate which goes first, so neither always finds the pages the other just read.
      let storeMs: number;
      let baseMs: number;
      if (i % 2 === 0) {
        storeMs = await timeStore();
        baseMs = timeBase();
      } else {
        baseMs = timeBase();
        storeMs = await timeStore();
      }
      if (i >= warmup) {
        times.push(storeMs);
        baseTimes.push(baseMs);
      }
      if (i % 50 === 0) sampleRss();
    }
  } finally {
    await store.close();
    raw.close();
    clearInterval(timer);
  }
  sampleRss();
  times.sort((a, b) => a - b);
  baseTimes.sort((a, b) => a - b);
  return {
    samples,
    entriesPerLoad,
    p50Ms: percentile(times, 50),
    p99Ms: percentile(times, 99),
    baselineP50Ms: percentile(baseTimes, 50),
    baselineP99Ms: percentile(baseTimes, 99),
    startRssMb: startRss / MB,
    peakRssSampledMb: peakRss / MB,
    maxRssMb: process.resourceUsage().maxRSS / 1024,
  };
}

const [path, sessions, samples, warmup] = process.argv.slice(2);
if (!path) throw new Error("usage: context-probe.js <db path> <sessions> <samples> <warmup>");
const result = await probe(path, Number(sessions), Number(samples), Number(warmup));
if (process.send) process.send(result);
else process.stdout.write(`${JSON.stringify(result)}\n`);
