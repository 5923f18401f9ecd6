import { type ChildProcess, fork } from "node:child_process";
import { Agent, request } from "node:http";
import { join } from "node:path";
import type { ServerMessage } from "./gateway-server.js";
import { BENCH_TOKEN, prefillWebhookSessions, webhookPeer } from "./gateway-store.js";
import type { Bench, BenchContext, Row } from "./report.js";
import { atLeast, atMost, below, fixed, int, ratioText } from "./report.js";
import { nowMs, percentile } from "./support.js";
import { cpuBetween, cpuOf } from "./thread-cpu.js";

export interface GatewayResult {
  clients: number;
  storedSessions: number;
  prefillSec: number;
  requests: number;
  /** Bare Hono handler on @hono/node-server: the baseline (the better of a pass before and one after the gateway). */
  bareRps: number;
  bareP50Ms: number;
  bareP99Ms: number;
  bareMaxRssMb: number;
  /** Each client on its own session. */
  hotTurnsPerSec: number;
  hotP50Ms: number;
  hotP99Ms: number;
  /** One client, each turn waiting for the last: latency without queueing behind other clients. */
  soloP50Ms: number;
  soloP99Ms: number;
  bareSoloP99Ms: number;
  /** Each request to another session of the store. */
  spreadTurnsPerSec: number;
  spreadP50Ms: number;
  spreadP99Ms: number;
  /** The gateway's CPU per turn of the 50-client pass, µs: its main thread, and all its threads (Linux). */
  hotMainCpuUs?: number;
  hotAllCpuUs?: number;
  /** The bare handler's main-thread CPU per request of its kept pass, µs (Linux). */
  bareMainCpuUs?: number;
  /** The gateway with every turn answered at once, main-thread CPU per request, µs: its HTTP layer alone (Linux). */
  cannedMainCpuUs?: number;
  /** The gateway process's peak RSS over the whole run (start, both passes, close). */
  gatewayMaxRssMb: number;
  gatewayReadyRssMb: number;
  errors: number;
}

const CLIENTS = 50;
const STORED = 100_000;
const MIN_RATIO = 0.5;
const MAX_P99_MS = 5;
const MAX_RSS_MB = 250;
/** The gateway's main-thread CPU per echo turn, at most this many times the bare handler's per request. */
const MAX_CPU_RATIO = 3;

interface Driven {
  rps: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
}

/** A pass of `drive` with the server's CPU over it (undefined where /proc is not there to read). */
async function driveTimed(
  pid: number,
  pass: () => Promise<Driven>,
): Promise<Driven & { cpu: ReturnType<typeof cpuBetween> }> {
  const before = cpuOf(pid);
  const driven = await pass();
  return { ...driven, cpu: cpuBetween(before, cpuOf(pid)) };
}

/** One POST over a keep-alive socket; resolves with the status once the whole body is read. */
export function post(agent: Agent, url: URL, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        agent,
        host: url.hostname,
        port: url.port,
        path: "/api/webhook",
        method: "POST",
        headers: {
          "content-type": "application/json",
          "content-length": Buffer.byteLength(body),
          authorization: `Bearer ${BENCH_TOKEN}`,
        },
      },
      (res) => {
        res.on("data", () => {});
        res.on("end", () => resolve(res.statusCode ?? 0));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/**
 * `total` requests from `CLIENTS` concurrent clients, each waiting for its reply before the next;
 * the j-th request of client c goes to peer `peerOf(c, j)`.
 */
async function drive(
  url: string,
  total: number,
  peerOf: (client: number, j: number) => string,
  clients = CLIENTS,
): Promise<Driven> {
  const agent = new Agent({ keepAlive: true, maxSockets: clients });
  const target = new URL(url);
  const latencies = new Float64Array(total);
  let next = 0;
  let errors = 0;
  const client = async (c: number) => {
    for (let j = 0; ; j++) {
      const n = next++;
      if (n >= total) return;
      const body = JSON.stringify({ peer: peerOf(c, j), message: `hello from client ${c}, request ${j}` });
      const start = nowMs();
      const status = await post(agent, target, body);
      latencies[n] = nowMs() - start;
      if (status !== 200) errors++;
    }
  };
  const start = nowMs();
  await Promise.all(Array.from({ length: clients }, (_, c) => client(c)));
  const elapsed = nowMs() - start;
  agent.destroy();
  latencies.sort();
  return {
    rps: (total / elapsed) * 1000,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    errors,
  };
}

export interface Child {
  url: string;
  pid: number;
  readyRssKb: number;
  /** The server's RSS now and at its peak so far, KiB. */
  rss(): Promise<{ rssKb: number; maxRssKb: number }>;
  /** Its event loop's longest and p99 delay since the last call, ms (gateway-server.ts). */
  loopDelay(): Promise<{ maxMs: number; p99Ms: number }>;
  stop(): Promise<{ maxRssKb: number }>;
}

/** Forks `gateway-server.js` with `args` and waits for it to listen. */
export function startServer(args: string[]): Promise<Child> {
  const script = new URL("./gateway-server.js", import.meta.url);
  const child: ChildProcess = fork(script, args, { stdio: ["ignore", "ignore", "inherit", "ipc"] });
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`bench server ${args[0]} exited with ${code}`));
    child.once("exit", onExit);
    child.once("message", (message: ServerMessage) => {
      if (message.type === "error") return reject(new Error(`bench server ${args[0]}: ${message.message}`));
      if (message.type !== "ready")
        return reject(new Error(`bench server ${args[0]}: unexpected ${message.type}`));
      child.off("exit", onExit);
      resolve({
        url: message.url,
        pid: child.pid ?? 0,
        readyRssKb: message.rssKb,
        rss: () =>
          new Promise((done) => {
            child.once("message", (answer: ServerMessage) =>
              done(answer.type === "rss" ? answer : { rssKb: 0, maxRssKb: 0 }),
            );
            child.send({ type: "rss" });
          }),
        loopDelay: () =>
          new Promise((done) => {
            child.once("message", (answer: ServerMessage) =>
              done(answer.type === "loop" ? answer : { maxMs: Number.NaN, p99Ms: Number.NaN }),
            );
            child.send({ type: "loop" });
          }),
        stop: () =>
          new Promise((done, fail) => {
            child.once("message", (last: ServerMessage) => {
              if (last.type === "done") done({ maxRssKb: last.maxRssKb });
              else
                fail(
                  new Error(`bench server ${args[0]}: ${last.type === "error" ? last.message : last.type}`),
                );
            });
            child.send({ type: "stop" });
          }),
      });
    });
  });
}

const mb = (kb: number) => kb / 1024;

async function run(ctx: BenchContext): Promise<GatewayResult> {
  const requests = ctx.quick ? 3_000 : 20_000;
  const warmup = ctx.quick ? 1_000 : 3_000;
  const path = join(ctx.dir, "gateway.db");

  ctx.log(`  prefilling ${int(STORED)} webhook sessions...`);
  const { buildMs } = await prefillWebhookSessions(path, STORED);

  // The bare handler is measured before and after the gateway, and the better pass kept: on a busy machine
  // that makes the baseline the harder one to reach.
  const bare = await startServer(["bare"]);
  await drive(bare.url, warmup, (c) => webhookPeer(c));
  const bareBefore = await driveTimed(bare.pid, () => drive(bare.url, requests, (c) => webhookPeer(c)));
  ctx.log(`  bare Hono: ${int(bareBefore.rps)} req/s, p99 ${fixed(bareBefore.p99Ms, 2)} ms`);
  const solo = requests / 10;
  const bareSolo = await drive(bare.url, solo, () => webhookPeer(0), 1);

  const gateway = await startServer(["gateway", path, ctx.dir]);
  // Warm-up on sessions the passes below do not use, so every measured session starts from the store.
  await drive(gateway.url, warmup, (c, j) => webhookPeer(STORED - 1 - ((c + CLIENTS * j) % (STORED / 2))));
  const cpuBefore = cpuOf(gateway.pid);
  const hot = await drive(gateway.url, requests, (c) => webhookPeer(c));
  const hotCpu = cpuBetween(cpuBefore, cpuOf(gateway.pid));
  const gatewaySolo = await drive(gateway.url, solo, () => webhookPeer(0), 1);
  ctx.log(
    `  one client: gateway p99 ${fixed(gatewaySolo.p99Ms, 2)} ms, bare p99 ${fixed(bareSolo.p99Ms, 2)} ms`,
  );
  ctx.log(`  gateway, own session per client: ${int(hot.rps)} turns/s, p99 ${fixed(hot.p99Ms, 2)} ms`);
  // Each request to another stored session: client c walks c + 50, c + 100, ... past the hot ones.
  const spread = await drive(gateway.url, requests, (c, j) =>
    webhookPeer(CLIENTS + ((c + CLIENTS * j) % (STORED / 2))),
  );
  ctx.log(
    `  gateway, each turn on another session: ${int(spread.rps)} turns/s, p99 ${fixed(spread.p99Ms, 2)} ms`,
  );
  const gatewayEnd = await gateway.stop();

  const canned = await startServer(["canned", join(ctx.dir, "canned.db"), ctx.dir]);
  await drive(canned.url, warmup, (c) => webhookPeer(c));
  const cannedRun = await driveTimed(canned.pid, () => drive(canned.url, requests, (c) => webhookPeer(c)));
  await canned.stop();
  ctx.log(`  gateway with every turn answered at once: ${int(cannedRun.rps)} req/s`);

  const bareAfter = await driveTimed(bare.pid, () => drive(bare.url, requests, (c) => webhookPeer(c)));
  ctx.log(`  bare Hono again: ${int(bareAfter.rps)} req/s, p99 ${fixed(bareAfter.p99Ms, 2)} ms`);
  const bareEnd = await bare.stop();
  const bareRun = bareAfter.rps > bareBefore.rps ? bareAfter : bareBefore;

  return {
    clients: CLIENTS,
    storedSessions: STORED,
    prefillSec: buildMs / 1000,
    requests,
    bareRps: bareRun.rps,
    bareP50Ms: bareRun.p50Ms,
    bareP99Ms: bareRun.p99Ms,
    bareMaxRssMb: mb(bareEnd.maxRssKb),
    hotTurnsPerSec: hot.rps,
    hotP50Ms: hot.p50Ms,
    hotP99Ms: hot.p99Ms,
    soloP50Ms: gatewaySolo.p50Ms,
    soloP99Ms: gatewaySolo.p99Ms,
    bareSoloP99Ms: bareSolo.p99Ms,
    spreadTurnsPerSec: spread.rps,
    spreadP50Ms: spread.p50Ms,
    spreadP99Ms: spread.p99Ms,
    ...(hotCpu
      ? { hotMainCpuUs: (hotCpu.mainMs * 1000) / requests, hotAllCpuUs: (hotCpu.allMs * 1000) / requests }
      : {}),
    ...(bareRun.cpu ? { bareMainCpuUs: (bareRun.cpu.mainMs * 1000) / requests } : {}),
    ...(cannedRun.cpu ? { cannedMainCpuUs: (cannedRun.cpu.mainMs * 1000) / requests } : {}),
    gatewayMaxRssMb: mb(gatewayEnd.maxRssKb),
    gatewayReadyRssMb: mb(gateway.readyRssKb),
    errors: bareBefore.errors + bareAfter.errors + hot.errors + spread.errors + cannedRun.errors,
  };
}

function rows(r: GatewayResult): Row[] {
  const ratio = r.hotTurnsPerSec / r.bareRps;
  const spreadRatio = r.spreadTurnsPerSec / r.bareRps;
  const errors = r.errors > 0 ? `, ${int(r.errors)} non-200` : "";
  return [
    {
      figure: `turns/s over HTTP, ${r.clients} clients on own sessions (echo, strict; 0.10x when issue 28 was filed)${errors}`,
      value: int(r.hotTurnsPerSec),
      baseline: int(r.bareRps),
      ratio: ratioText(ratio),
      checks: [atLeast(ratio, MIN_RATIO, `${fixed(MIN_RATIO, 2)}x baseline`)],
    },
    {
      figure: `p99 ms of those turns (p50 ${fixed(r.hotP50Ms, 2)} ms)`,
      value: fixed(r.hotP99Ms, 2),
      baseline: fixed(r.bareP99Ms, 2),
      ratio: ratioText(r.hotP99Ms / r.bareP99Ms),
      checks: [below(r.hotP99Ms, MAX_P99_MS, `${MAX_P99_MS} ms`)],
    },
    {
      // With 50 clients each waiting for its reply, latency is 50 / throughput (Little's law): the p99 above
      // is mostly queueing. One client shows a turn's own latency.
      figure: `p99 ms of one client's turns, one at a time (p50 ${fixed(r.soloP50Ms, 2)} ms)`,
      value: fixed(r.soloP99Ms, 2),
      baseline: fixed(r.bareSoloP99Ms, 2),
      ratio: ratioText(r.soloP99Ms / r.bareSoloP99Ms),
      checks: [],
    },
    ...(r.hotMainCpuUs !== undefined && r.hotAllCpuUs !== undefined
      ? [
          {
            // Steadier than turns/s on a busy machine: what one turn costs the gateway's event loop.
            figure:
              "main-thread CPU µs per echo turn of those (all threads); baseline per bare request (9.3x when issue 28 was filed)",
            value: `${fixed(r.hotMainCpuUs, 0)} (${fixed(r.hotAllCpuUs, 0)})`,
            baseline: r.bareMainCpuUs === undefined ? "" : fixed(r.bareMainCpuUs, 0),
            ratio: r.bareMainCpuUs === undefined ? "" : ratioText(r.hotMainCpuUs / r.bareMainCpuUs),
            checks:
              r.bareMainCpuUs === undefined
                ? []
                : [
                    atMost(
                      r.hotMainCpuUs / r.bareMainCpuUs,
                      MAX_CPU_RATIO,
                      `${fixed(MAX_CPU_RATIO, 0)}x baseline`,
                    ),
                  ],
          },
        ]
      : []),
    ...(r.cannedMainCpuUs !== undefined
      ? [
          {
            // Where the turn's CPU goes: auth, request id, access log, body checks and the reply, no engine.
            figure: "main-thread CPU µs per request, the gateway with every turn answered at once",
            value: fixed(r.cannedMainCpuUs, 0),
            baseline: r.bareMainCpuUs === undefined ? "" : fixed(r.bareMainCpuUs, 0),
            ratio: r.bareMainCpuUs === undefined ? "" : ratioText(r.cannedMainCpuUs / r.bareMainCpuUs),
            checks: [],
          },
        ]
      : []),
    {
      figure: `turns/s, each on another stored session (p99 ${fixed(r.spreadP99Ms, 2)} ms)`,
      value: int(r.spreadTurnsPerSec),
      baseline: int(r.bareRps),
      ratio: ratioText(spreadRatio),
      checks: [],
    },
    {
      figure: `gateway peak RSS MB, ${int(r.storedSessions)} sessions stored`,
      value: fixed(r.gatewayMaxRssMb, 0),
      baseline: fixed(r.bareMaxRssMb, 0),
      ratio: ratioText(r.gatewayMaxRssMb / r.bareMaxRssMb),
      checks: [below(r.gatewayMaxRssMb, MAX_RSS_MB, `${MAX_RSS_MB} MB`)],
    },
  ];
}

/**
 * The gateway over HTTP against a bare Hono handler on @hono/node-server, each in its own process, driven
 * by the same 50 keep-alive clients (`POST /api/webhook`, `peer` per client): the echo runtime, a SQLite store
 * with strict durability (the default) pre-filled with 100,000 sessions, the request log to /dev/null.
 */
export const gatewayThroughput: Bench<GatewayResult> = {
  name: `gateway HTTP, ${CLIENTS} clients, echo runtime, strict durability (baseline: bare Hono handler)`,
  run,
  rows,
};
