import { Agent, request } from "node:http";
import { join } from "node:path";
import { type Child, post, startServer } from "./gateway.js";
import { BENCH_TOKEN } from "./gateway-store.js";
import type { Bench, BenchContext, Row } from "./report.js";
import { atMost, fixed, int, ratioText } from "./report.js";
import { nowMs, random } from "./support.js";

/** One phase's figures: how long `/health` took at most while it ran, and the event loop's longest delay. */
export interface Stall {
  healthMaxMs: number;
  healthCount: number;
  loopMaxMs: number;
  loopP99Ms: number;
}

export interface SearchStallQuery extends Stall {
  query: string;
  searchMs: number;
  hits: number;
  complete: boolean;
}

export interface SearchStallResult {
  messages: number;
  messageBytes: number;
  /** The idle gateway: the baseline. */
  idle: Stall;
  /** While the messages were stored, then indexed (until the first search). */
  storing: Stall & { storeSec: number };
  searches: SearchStallQuery[];
  errors: number;
}

const MESSAGES = 40;
const QUICK_MESSAGES = 12;
const MESSAGE_BYTES = 900_000;
const MAX_LOOP_MS = 50;
/** How long `/health` is polled after the last message was stored, while the index takes them in. */
const SETTLE_MS = 3_000;
const RARE = "needle";

/**
 * About `bytes` of text from a vocabulary as wide as a real conversation's (common words, and made-up ones
 * from syllables, so the index holds tens of thousands of distinct words); `rare` in the middle.
 */
function bigMessage(bytes: number, seed: number, rare: string | undefined): string {
  const next = random(seed);
  const common = "the a of and to in is it that for on with as was at by this be session layer".split(" ");
  const syllables = "ka lo mi ne ru sa to vi ze po qu dra fen gil hor".split(" ");
  const parts: string[] = [];
  let length = 0;
  while (length < bytes) {
    let word = "";
    if (next() < 0.6) word = common[Math.floor(next() * common.length)] ?? "the";
    else
      for (let k = 2 + Math.floor(next() * 3); k > 0; k--)
        word += syllables[Math.floor(next() * syllables.length)];
    if (rare && length < bytes / 2 && length + word.length + 1 >= bytes / 2) word = rare;
    parts.push(word);
    length += word.length + 1;
  }
  return parts.join(" ").slice(0, bytes);
}

/** A GET with the bench token; resolves with the parsed JSON body and how long it took. */
function get(agent: Agent, url: URL, path: string): Promise<{ ms: number; body: unknown; status: number }> {
  const start = nowMs();
  return new Promise((resolve, reject) => {
    const req = request(
      {
        agent,
        host: url.hostname,
        port: url.port,
        path,
        headers: { authorization: `Bearer ${BENCH_TOKEN}` },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let body: unknown;
          try {
            body = JSON.parse(text);
          } catch {
            body = text;
          }
          resolve({ ms: nowMs() - start, body, status: res.statusCode ?? 0 });
        });
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end();
  });
}

/** Polls `/health` (each request after the last answered) until `done` settles; the slowest, and how many. */
async function healthWhile(
  agent: Agent,
  url: URL,
  done: Promise<unknown>,
): Promise<{ maxMs: number; count: number }> {
  let finished = false;
  void done.finally(() => {
    finished = true;
  });
  let maxMs = 0;
  let count = 0;
  while (!finished) {
    const { ms } = await get(agent, url, "/health");
    maxMs = Math.max(maxMs, ms);
    count++;
  }
  return { maxMs, count };
}

async function measured(gateway: Child, agent: Agent, url: URL, work: Promise<unknown>): Promise<Stall> {
  await gateway.loopDelay();
  const health = await healthWhile(agent, url, work);
  await work;
  const loop = await gateway.loopDelay();
  return {
    healthMaxMs: health.maxMs,
    healthCount: health.count,
    loopMaxMs: loop.maxMs,
    loopP99Ms: loop.p99Ms,
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function run(ctx: BenchContext): Promise<SearchStallResult> {
  const messages = ctx.quick ? QUICK_MESSAGES : MESSAGES;
  const gateway = await startServer(["gateway", join(ctx.dir, "search-stall.db"), ctx.dir]);
  const url = new URL(gateway.url);
  const healthAgent = new Agent({ keepAlive: true, maxSockets: 1 });
  const workAgent = new Agent({ keepAlive: true, maxSockets: 4 });
  let errors = 0;
  try {
    // Warm-up: the first requests load the routes' code; the baseline is the idle gateway after them.
    for (let i = 0; i < 20; i++) await get(healthAgent, url, "/health");
    if ((await post(workAgent, url, JSON.stringify({ peer: "warm-up", message: "hello" }))) !== 200) errors++;
    await get(workAgent, url, "/api/search?q=hello");
    await sleep(500);
    const idle = await measured(gateway, healthAgent, url, sleep(2_000));
    ctx.log(`  idle: /health max ${fixed(idle.healthMaxMs, 1)} ms, loop max ${fixed(idle.loopMaxMs, 1)} ms`);

    const storeStart = nowMs();
    const storing = async () => {
      for (let i = 0; i < messages; i++) {
        const message = bigMessage(MESSAGE_BYTES, i + 1, i % 10 === 3 ? RARE : undefined);
        const status = await post(workAgent, url, JSON.stringify({ peer: `big-${i}`, message }));
        if (status !== 200) errors++;
      }
    };
    const storePhase = storing();
    const stored = await measured(
      gateway,
      healthAgent,
      url,
      storePhase.then(() => sleep(SETTLE_MS)),
    );
    const storeSec = (nowMs() - storeStart) / 1000 - SETTLE_MS / 1000;
    ctx.log(
      `  stored ${messages} x ${fixed(MESSAGE_BYTES / 1e6, 1)} MB in ${fixed(storeSec, 1)} s: /health max ` +
        `${fixed(stored.healthMaxMs, 0)} ms, loop max ${fixed(stored.loopMaxMs, 0)} ms`,
    );

    const queries: Array<[string, string]> = [
      ["rare word", `q=${RARE}`],
      ["prefix", `q=${RARE.slice(0, 4)}`],
      ["phrase", `q=${encodeURIComponent('"the session layer"')}`],
      ["filtered", `q=kalo&role=user&agent=main`],
    ];
    const searches: SearchStallQuery[] = [];
    for (const [name, query] of queries) {
      let answer: { ms: number; body: unknown; status: number } | undefined;
      const search = get(workAgent, url, `/api/search?${query}`).then((a) => {
        answer = a;
      });
      const stall = await measured(gateway, healthAgent, url, search);
      const body = (answer?.body ?? {}) as { hits?: unknown[]; complete?: boolean };
      if (answer?.status !== 200) errors++;
      searches.push({
        query: name,
        searchMs: answer?.ms ?? Number.NaN,
        hits: body.hits?.length ?? 0,
        complete: body.complete !== false,
        ...stall,
      });
      ctx.log(
        `  search ${name}: ${fixed(answer?.ms ?? Number.NaN, 0)} ms, ${body.hits?.length ?? 0} hits` +
          `${body.complete === false ? " (incomplete)" : ""}; /health max ${fixed(stall.healthMaxMs, 0)} ms, ` +
          `loop max ${fixed(stall.loopMaxMs, 0)} ms`,
      );
    }
    return {
      messages,
      messageBytes: MESSAGE_BYTES,
      idle,
      storing: { ...stored, storeSec },
      searches,
      errors,
    };
  } finally {
    healthAgent.destroy();
    workAgent.destroy();
    await gateway.stop();
  }
}

function rows(r: SearchStallResult): Row[] {
  const base = r.idle;
  // The longer of the two: a task that blocks the loop for a second has shown as a histogram max of 0
  // (the sample is taken after the IPC question is answered), never as a quick /health.
  const stall = (s: Stall) => Math.max(s.loopMaxMs, s.healthMaxMs);
  const row = (figure: string, s: Stall): Row => ({
    figure: `${figure}: longest stall ms, the larger of the event loop's delay (${fixed(s.loopMaxMs, 0)}) and /health's wait (${fixed(s.healthMaxMs, 0)}, ${int(s.healthCount)} requests)`,
    value: fixed(stall(s), 0),
    baseline: fixed(stall(base), 0),
    ratio: ratioText(stall(s) / stall(base)),
    checks: [atMost(stall(s), MAX_LOOP_MS, `${MAX_LOOP_MS} ms`)],
  });
  const errors = r.errors > 0 ? `, ${int(r.errors)} errors` : "";
  return [
    row(
      `storing ${int(r.messages)} messages of ${fixed(r.messageBytes / 1e6, 1)} MB through /api/webhook (${fixed(r.storing.storeSec, 1)} s) and indexing them${errors}`,
      r.storing,
    ),
    ...r.searches.map((s) =>
      row(
        `search, ${s.query} (${fixed(s.searchMs, 0)} ms, ${int(s.hits)} hits${s.complete ? "" : ", incomplete"})`,
        s,
      ),
    ),
  ];
}

/**
 * Search that never blocks: a real gateway (gateway-server.ts, SQLite, echo runtime) takes 40 messages of
 * 0.9 MB through `/api/webhook`, then is searched 4 ways (a rare word, a prefix, a phrase, a filtered
 * search); `/health` is polled while each phase runs, and the gateway reports its event loop's longest
 * delay (`monitorEventLoopDelay`). Baseline: the same figures on the idle gateway.
 */
export const searchStall: Bench<SearchStallResult> = {
  name: `search while it stores and searches ${MESSAGES} messages of 0.9 MB (baseline: the idle gateway)`,
  run,
  rows,
};
