// CPU per durable JSONL append of a built checkout (its dist/): the bench's jsonlConcurrent workload
// (`sessions` writers, each awaiting its own strict appends), after a warm-up round.
// Run: node scripts/profile/jsonl-appends.mjs [perSession] [checkout] [sessions] [nosearch] [profile.cpuprofile]
// `nosearch`: the store without its search index, to tell its cost apart ("search" keeps it). With a profile
// path, the measured appends alone are profiled: `node scripts/profile/cpu-areas.mjs FILE` sums it by area.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const perSession = Number(process.argv[2] ?? 200);
const root = resolve(process.argv[3] ?? ".");
const sessions = Number(process.argv[4] ?? 100);
const searchIndex = process.argv[5] !== "nosearch";
const profilePath = process.argv[6];
const { JsonlStore } = await import(`${root}/dist/src/store/jsonl/jsonl-store.js`);
const { BENCH_INIT, benchKey, messageContents, userMessage } = await import(`${root}/dist/bench/support.js`);
const contents = messageContents(1000);
const content = (i) => contents[i % contents.length] ?? "";
// Before the log core (f4894e8) the third argument was the init itself.
const OPEN = { ...BENCH_INIT, init: BENCH_INIT };
const base = mkdtempSync(join(tmpdir(), "sessiond-jsonl-appends-"));

async function round(name, per, profiler) {
  const store = new JsonlStore({ path: join(base, name), searchIndex });
  const keys = Array.from({ length: sessions }, (_, s) => benchKey(s));
  await Promise.all(keys.map((key, s) => store.append(key, [userMessage(content(s))], OPEN)));
  await profiler?.post("Profiler.start");
  const cpu = process.cpuUsage();
  const start = performance.now();
  await Promise.all(
    keys.map(async (key, s) => {
      for (let i = 1; i <= per; i++) await store.append(key, [userMessage(content(s * 31 + i))]);
    }),
  );
  const ms = performance.now() - start;
  const used = process.cpuUsage(cpu);
  const profile = await profiler?.post("Profiler.stop");
  if (profile) writeFileSync(profilePath, JSON.stringify(profile.profile));
  // What indexing the appends left for later: a search first writes it all (a budget it cannot run out of).
  const after = process.cpuUsage();
  const catchUpStart = performance.now();
  if (searchIndex) await store.search({ text: "nothingmatchesthis" }, { budgetMs: 600_000 });
  const catchUpMs = performance.now() - catchUpStart;
  const catchUp = process.cpuUsage(after);
  await store.close();
  const catchUpUs = catchUp.user + catchUp.system;
  return {
    ms,
    cpuUs: used.user + used.system,
    userUs: used.user,
    count: sessions * per,
    catchUpMs,
    catchUpUs,
  };
}

let profiler;
if (profilePath) {
  profiler = new Session();
  profiler.connect();
  await profiler.post("Profiler.enable");
}
await round("warmup", Math.max(1, Math.round(perSession / 4)));
const r = await round("measured", perSession, profiler);
console.log(
  `${root}: ${Math.round((r.count / r.ms) * 1000)} appends/s, ${(r.cpuUs / r.count).toFixed(1)} µs of CPU per append (${(r.userUs / r.count).toFixed(1)} user; ${sessions} sessions${searchIndex ? "" : ", no search index"})${searchIndex ? `; then a search caught up in ${r.catchUpMs.toFixed(0)} ms, ${(r.catchUpUs / r.count).toFixed(1)} µs of CPU per append` : ""}`,
);
rmSync(base, { recursive: true, force: true });
