// CPU per engine.turn of a built checkout (its dist/), 50 clients on their own sessions, after a warm-up.
// Run: node [--cpu-prof --cpu-prof-dir=DIR] scripts/profile/turns-cpu.mjs [turns] [checkout] [memory|sqlite]
// With --cpu-prof, `node scripts/profile/cpu-summary.mjs DIR/<file>.cpuprofile` says where the time went.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const turns = Number(process.argv[2] ?? 20_000);
const root = resolve(process.argv[3] ?? ".");
const backend = process.argv[4] ?? "memory";
const { createEngine } = await import(`${root}/dist/src/engine.js`);
const { webhookEnvelope } = await import(`${root}/dist/bench/gateway-store.js`);
const dir = mkdtempSync(join(tmpdir(), "sessiond-turns-cpu-"));
const engine = await createEngine({ dataDir: dir, store: { backend, path: join(dir, "s.db") } });
for (let i = 0; i < 2000; i++) await engine.turn(webhookEnvelope(`w-${i % 50}`, `hello ${i}`));
const start = process.cpuUsage();
let next = 0;
await Promise.all(
  Array.from({ length: 50 }, async (_, client) => {
    while (next < turns) {
      next++;
      await engine.turn(webhookEnvelope(`c-${client}`, `hello from ${client} ${next}`));
    }
  }),
);
const used = process.cpuUsage(start);
console.log(`${root}: ${((used.user + used.system) / turns).toFixed(1)} µs of CPU (all threads) per turn`);
await engine.close();
rmSync(dir, { recursive: true, force: true });
