// child: node [flags] server.mjs <distroot> <dir>
import { readFileSync } from "node:fs";
import { getHeapSpaceStatistics } from "node:v8";

const [root, dir] = process.argv.slice(2);
const { createEngine } = await import(`${root}/dist/src/engine.js`);
const { limitHeapGrowth } = await import(`${root}/dist/src/gateway/heap.js`);
const { createGatewayLogger, logDestination } = await import(`${root}/dist/src/gateway/logger.js`);
const { startGateway } = await import(`${root}/dist/src/gateway/server.js`);
const { BENCH_TOKEN } = await import(`${root}/dist/bench/gateway-store.js`);
if (!process.env.NOLIMIT) limitHeapGrowth();
const engine = await createEngine({ dataDir: dir, store: { backend: "sqlite", path: `${dir}/m.db` } });
const logger = createGatewayLogger({ destination: logDestination("/dev/null") });
const running = await startGateway({ engine, token: BENCH_TOKEN, port: 0, logger, graceMs: 2000 });
let elu = performance.eventLoopUtilization();
function mem() {
  const e = performance.eventLoopUtilization(elu);
  elu = performance.eventLoopUtilization();
  const m = process.memoryUsage();
  const smaps = readFileSync("/proc/self/smaps_rollup", "utf8");
  const pick = (k) => Number(new RegExp(`^${k}:\\s+(\\d+)`, "m").exec(smaps)?.[1] ?? 0) / 1024;
  const spaces = Object.fromEntries(
    getHeapSpaceStatistics().map((s) => [
      s.space_name.replace("_space", ""),
      +(s.space_size / 1048576).toFixed(1),
    ]),
  );
  return {
    elu: e.utilization,
    rss: m.rss / 1048576,
    heapTotal: m.heapTotal / 1048576,
    heapUsed: m.heapUsed / 1048576,
    external: m.external / 1048576,
    ab: m.arrayBuffers / 1048576,
    anon: pick("Anonymous"),
    maxRss: process.resourceUsage().maxRSS / 1024,
    spaces,
  };
}

import { writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";

const insp = new Session();
insp.connect();
process.on("message", async (msg) => {
  if (msg.type === "profstart") {
    await insp.post("Profiler.enable");
    await insp.post("Profiler.start");
    process.send({ type: "ok" });
  }
  if (msg.type === "profstop") {
    const { profile } = await insp.post("Profiler.stop");
    writeFileSync("idle.cpuprofile", JSON.stringify(profile));
    process.send({ type: "ok" });
  }
  if (msg.type === "mem") process.send({ type: "mem", ...mem() });
  if (msg.type === "lowmem") {
    const t = performance.now();
    await insp.post("HeapProfiler.collectGarbage");
    const ms = performance.now() - t;
    process.send({ type: "mem", ms, ...mem() });
  }
  if (msg.type === "gc") {
    globalThis.gc?.();
    process.send({ type: "mem", ...mem() });
  }
  if (msg.type === "stop") running.close().then(() => process.exit(0));
});
process.send({ type: "ready", url: running.url, ...mem() });
