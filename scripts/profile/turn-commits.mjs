// Commits and fsyncs per sequential agent turn (echo runtime, durable admission) of a built checkout, on
// SQLite or JSONL: the store's writer's commits, and every fsync made through node:fs (the SQLite WAL's,
// the JSONL journal's and inbox file's; not SQLite's own checkpoints, which run in its C code).
// Run: node scripts/profile/turn-commits.mjs [checkout] [sqlite|jsonl] [turns]
import fs, { mkdtempSync, rmSync } from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const root = resolve(process.argv[2] ?? ".");
const backend = process.argv[3] ?? "sqlite";
const turns = Number(process.argv[4] ?? 50);
const { createEngine } = await import(`${root}/dist/src/engine.js`);
const dir = mkdtempSync(join(tmpdir(), "sessiond-turn-commits-"));
const engine = await createEngine({
  dataDir: dir,
  store: { backend, path: backend === "sqlite" ? join(dir, "s.db") : join(dir, "sessions") },
  titles: { enabled: false },
});
const driver = engine.store.driver;
let commits = 0;
let fsyncs = 0;
for (const name of ["fsync", "fsyncSync", "fdatasync", "fdatasyncSync"]) {
  const original = fs[name];
  fs[name] = (...args) => {
    fsyncs++;
    return original(...args);
  };
}
syncBuiltinESMExports();
const commit = driver.commit.bind(driver);
driver.commit = (groups, durable) => {
  commits++;
  return commit(groups, durable);
};
const envelope = (text) => ({
  channel: "telegram",
  chat: { type: "direct", id: "1" },
  sender: { id: "1" },
  text,
});
for (let i = 0; i < 5; i++) await engine.turn(envelope(`warm-up ${i}`));
commits = 0;
fsyncs = 0;
for (let i = 0; i < turns; i++) await engine.turn(envelope(`hello ${i}`));
console.log(
  `${root} (${backend}): per turn ${(commits / turns).toFixed(2)} store commits, ${(fsyncs / turns).toFixed(2)} fsyncs`,
);
await engine.close();
rmSync(dir, { recursive: true, force: true });
