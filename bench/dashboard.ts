import { existsSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { createEngine } from "../src/engine.js";
import { startGateway } from "../src/gateway/server.js";
import { defaultWebDir } from "../src/gateway/web/dir.js";
import { openStore } from "../src/store/open.js";
import { type Bench, below, fixed, int, type Row } from "./report.js";
import { databaseBytes, percentile } from "./support.js";

const TOKEN = "bench-token-dashboard-0123456789";
const CHROMIUM = "/usr/bin/chromium";
const PAGE = 25;
const REPEAT = 30;

export interface DashboardResult {
  sessions: number;
  seedMs: number;
  dbBytes: number;
  /** Milliseconds per request, over HTTP with the token: the first (cold) one and the median/p99 after. */
  firstPageColdMs: number;
  pages: Record<string, { p50: number; p99: number }>;
  /** From navigation start to the first session row on screen in Chromium; NaN when it is not installed. */
  firstRenderMs: number;
}

/**
 * `count` current sessions straight into the schema with one INSERT … SELECT (a recursive counter): no
 * entries, since listing reads only the sessions table. One in ten is agent `ops`; activity is spread over
 * the last hours in a shuffled order, so the activity index is not the insertion order.
 */
function seed(path: string, count: number): void {
  const db = new Database(path);
  try {
    db.pragma("synchronous = OFF");
    const now = Date.now();
    db.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < @last)
       INSERT INTO sessions (id, key, generation, state, agent, channel, chat_type, created_by, title,
         created_at, last_activity_at, entry_count, message_count, approx_tokens, context_from_seq)
       SELECT printf('01BENCH%019d', i), 'telegram:' || i, 1, 'active',
         CASE WHEN i % 10 = 0 THEN 'ops' ELSE 'main' END,
         CASE i % 3 WHEN 0 THEN 'telegram' WHEN 1 THEN 'discord' ELSE 'web' END,
         'direct', 'user-' || i, 'Conversation number ' || i,
         @now - (@count - i) * 20, @now - ((i * 7919) % @count) * 20, 2, 2, 120, 1
       FROM n`,
    ).run({ last: count - 1, count, now });
    db.pragma("wal_checkpoint(TRUNCATE)");
  } finally {
    db.close();
  }
}

async function timeRequest(url: string): Promise<number> {
  const start = performance.now();
  const res = await fetch(url, { headers: { authorization: `Bearer ${TOKEN}` } });
  if (!res.ok) throw new Error(`${url}: ${res.status} ${await res.text()}`);
  await res.arrayBuffer();
  return performance.now() - start;
}

async function repeat(url: string): Promise<{ p50: number; p99: number }> {
  const times: number[] = [];
  for (let i = 0; i < REPEAT; i++) times.push(await timeRequest(url));
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p99: percentile(times, 99) };
}

/** Chromium (if installed) loads /sessions signed in; the time until the first row is drawn. */
async function firstRender(origin: string, log: (m: string) => void): Promise<number> {
  const webDir = defaultWebDir();
  if (!existsSync(CHROMIUM) || !webDir || !existsSync(join(webDir, "index.html"))) {
    log("dashboard render: skipped (no /usr/bin/chromium or no dist/web)");
    return Number.NaN;
  }
  const { chromium } = await import("playwright-core");
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
    ],
  });
  try {
    const page = await browser.newPage();
    await page.addInitScript(`sessionStorage.setItem("sessiond.token", ${JSON.stringify(TOKEN)})`);
    const times: number[] = [];
    for (let i = 0; i < 5; i++) {
      await page.goto(`${origin}/sessions`);
      await page.locator("tbody tr").first().waitFor();
      times.push(await page.evaluate<number>("performance.now()"));
    }
    times.sort((a, b) => a - b);
    return percentile(times, 50);
  } finally {
    await browser.close();
  }
}

async function run(ctx: { dir: string; quick: boolean; log: (m: string) => void }): Promise<DashboardResult> {
  const sessions = ctx.quick ? 100_000 : 1_000_000;
  const path = join(ctx.dir, "dashboard.db");
  await (await openStore({ backend: "sqlite", path })).close();
  const seedStart = performance.now();
  seed(path, sessions);
  const seedMs = performance.now() - seedStart;
  ctx.log(`dashboard: ${int(sessions)} sessions seeded in ${fixed(seedMs / 1000, 1)} s`);

  const engine = await createEngine({
    dataDir: ctx.dir,
    store: { backend: "sqlite", path },
    titles: { enabled: false },
    lifecycle: { sweepIntervalMs: 0 },
  });
  const gateway = await startGateway({
    engine,
    token: TOKEN,
    port: 0,
    logger: { info: () => {}, warn: () => {}, error: () => {} },
  });
  try {
    const api = `${gateway.url}/api/sessions`;
    const firstPageColdMs = await timeRequest(`${api}?sort=activity&limit=${PAGE}`);
    // A page deep in the list: follow cursors 40 pages down, then time that page.
    let cursor = "";
    for (let i = 0; i < 40; i++) {
      const res = await fetch(`${api}?sort=activity&limit=${PAGE}${cursor ? `&cursor=${cursor}` : ""}`, {
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      cursor = ((await res.json()) as { nextCursor: string }).nextCursor;
    }
    const pages = {
      "first page, by activity": await repeat(`${api}?sort=activity&limit=${PAGE}`),
      "first page, newest created": await repeat(`${api}?sort=created&limit=${PAGE}`),
      "first page, agent ops": await repeat(`${api}?sort=activity&agent=ops&limit=${PAGE}`),
      "first page, active 15 min": await repeat(`${api}?sort=activity&active=15&limit=${PAGE}`),
      "page 41 (cursor)": await repeat(`${api}?sort=activity&limit=${PAGE}&cursor=${cursor}`),
      "text search, no match (5,000 read)": await repeat(`${api}?sort=activity&limit=${PAGE}&q=zzz-none`),
      "text search, common match": await repeat(`${api}?sort=activity&limit=${PAGE}&q=number%201`),
      "overview, 24 h": await repeat(`${gateway.url}/api/stats/overview?hours=24`),
    };
    const firstRenderMs = await firstRender(gateway.url, ctx.log);
    return { sessions, seedMs, dbBytes: databaseBytes(path), firstPageColdMs, pages, firstRenderMs };
  } finally {
    await gateway.close();
  }
}

function rows(r: DashboardResult): Row[] {
  const ms = (n: number) => `${fixed(n, 1)} ms`;
  const out: Row[] = [
    {
      figure: `first page of /api/sessions, cold (${int(r.sessions)} sessions, ${fixed(r.dbBytes / 1024 ** 2, 0)} MB)`,
      value: ms(r.firstPageColdMs),
      baseline: "",
      ratio: "",
      checks: [below(r.firstPageColdMs, 1000, "1 s")],
    },
  ];
  for (const [name, { p50, p99 }] of Object.entries(r.pages)) {
    out.push({
      figure: `${name}: p50 / p99`,
      value: `${ms(p50)} / ${ms(p99)}`,
      baseline: "",
      ratio: "",
      checks: [],
    });
  }
  out.push({
    figure: "dashboard: first session row drawn (Chromium, p50 of 5 loads)",
    value: Number.isNaN(r.firstRenderMs) ? "skipped" : ms(r.firstRenderMs),
    baseline: "",
    ratio: "",
    checks: Number.isNaN(r.firstRenderMs) ? [] : [below(r.firstRenderMs, 1000, "1 s")],
  });
  return out;
}

/** The dashboard's reads on a store of a million sessions (100,000 with --quick): the first page in under a second. */
export const dashboardReads: Bench<DashboardResult> = {
  name: "dashboard reads over HTTP on a large store",
  run,
  rows,
};
