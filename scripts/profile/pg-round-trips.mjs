// Round trips to PostgreSQL per sequential turn of a built checkout: every `query` any pg client of the
// process sends (the store's pool, its LISTEN connection), counted by what the statement starts with.
// `turn`: an agent turn (echo runtime, its input admitted to the inbox: what /api/chat runs); `turnWith`:
// the bench's echo turn (a runner of the caller's, no inbox), each with its lease; `alternate`: agent turns
// on one key taken in turn by two engines on one database (as the bench's two gateways do), so each finds
// the key last written by the other.
// Run: node scripts/profile/pg-round-trips.mjs [checkout=.] [turn|turnWith|alternate] [turns=50]
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const root = resolve(process.argv[2] ?? ".");
const mode = process.argv[3] ?? "turn";
const turns = Number(process.argv[4] ?? 50);
const pg = createRequire(join(root, "package.json"))("pg");
const { createEngine } = await import(`${root}/dist/src/engine.js`);
const { startPostgres } = await import(`${root}/dist/bench/postgres-cluster.js`);

const counts = new Map();
let counting = false;
const query = pg.Client.prototype.query;
pg.Client.prototype.query = function (config, ...rest) {
  if (counting) {
    const text = typeof config === "string" ? config : (config?.text ?? "");
    const head = text.replace(/\s+/g, " ").trim().slice(0, 48);
    counts.set(head, (counts.get(head) ?? 0) + 1);
  }
  return query.call(this, config, ...rest);
};

const cluster = await startPostgres();
const dir = mkdtempSync(join(tmpdir(), "sessiond-pg-round-trips-"));
try {
  const url = await cluster.createDatabase();
  const open = () =>
    createEngine({ dataDir: dir, store: { backend: "postgres", url }, titles: { enabled: false } });
  const engine = await open();
  const second = mode === "alternate" ? await open() : undefined;
  let n = 0;
  const envelope = (text) => ({
    channel: "telegram",
    chat: { type: "direct", id: "1" },
    sender: { id: "1" },
    text,
  });
  const one = (text) => {
    if (mode === "turn") return engine.turn(envelope(text));
    if (mode === "alternate") return (n++ % 2 === 0 ? engine : second).turn(envelope(text));
    return engine.turnWith(envelope(text), async (c) => `echo: ${c.input.content}`);
  };
  for (let i = 0; i < 5; i++) await one(`warm-up ${i}`);
  counting = true;
  const cpu = process.cpuUsage();
  for (let i = 0; i < turns; i++) await one(`hello ${i}`);
  const used = process.cpuUsage(cpu);
  counting = false;
  await engine.store.flush();
  const total = [...counts.values()].reduce((a, b) => a + b, 0);
  const cpuMs = (used.user + used.system) / 1000 / turns;
  console.log(
    `${root} (${mode}): ${(total / turns).toFixed(2)} round trips, ${cpuMs.toFixed(2)} ms CPU per turn`,
  );
  const fallbacks = [engine, second].reduce((sum, e) => sum + (e?.store.batchFallbacks?.().count ?? 0), 0);
  console.log(`  batches that fell back: ${fallbacks}`);
  for (const [head, n] of [...counts].sort((a, b) => b[1] - a[1]))
    console.log(`  ${(n / turns).toFixed(2)}  ${head}`);
  await engine.close();
  await second?.close();
} finally {
  await cluster.remove();
  rmSync(dir, { recursive: true, force: true });
}
