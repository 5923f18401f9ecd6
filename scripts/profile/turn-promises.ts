// Promises per engine.turn on the memory store, and where they are made (the first frame in src/ of each
// promise's creation stack). Run: npx tsx scripts/profile/turn-promises.ts [turns]
import { createHook } from "node:async_hooks";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { webhookEnvelope } from "../../bench/gateway-store.js";
import { createEngine } from "../../src/engine.js";

const turns = Number(process.argv[2] ?? 200);
const dir = mkdtempSync(join(tmpdir(), "sessiond-promises-"));
const engine = await createEngine({ dataDir: dir, store: { backend: "memory" } });
const envelope = (i: number) => webhookEnvelope(`k-${i % 10}`, `hello ${i}`);
for (let i = 0; i < 200; i++) await engine.turn(envelope(i));
const counts = new Map<string, number>();
let total = 0;
const hook = createHook({
  init(_id, type) {
    if (type !== "PROMISE") return;
    total++;
    const frames = (new Error().stack ?? "").split("\n").slice(2);
    const frame = frames.find((line) => line.includes("/src/")) ?? frames[0] ?? "?";
    const where = frame.trim().replace(/^at /, "");
    counts.set(where, (counts.get(where) ?? 0) + 1);
  },
});
hook.enable();
for (let i = 0; i < turns; i++) await engine.turn(envelope(1000 + i));
hook.disable();
console.log(`promises per turn: ${(total / turns).toFixed(1)}`);
for (const [where, n] of [...counts].sort((a, b) => b[1] - a[1]).slice(0, 40)) {
  console.log(`${(n / turns).toFixed(2).padStart(6)} ${where}`);
}
await engine.close();
rmSync(dir, { recursive: true, force: true });
