// What a built checkout keeps after 100 turns of 0.9 MB messages (8 clients, SQLite, a session each): peak RSS
// while they run, then the heap after a full GC. Run: node --expose-gc scripts/profile/big-messages-heap.mjs [checkout]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const root = resolve(process.argv[2] ?? ".");
const { createEngine } = await import(`${root}/dist/src/engine.js`);
const dir = mkdtempSync(join(tmpdir(), "sessiond-big-"));
const engine = await createEngine({ dataDir: dir });
const message = (n) => `message ${n} ${"lorem ipsum dolor sit amet ".repeat(33_000)}`;
let next = 0;
let peak = 0;
const sampler = setInterval(() => {
  peak = Math.max(peak, process.memoryUsage().rss);
}, 20);
await Promise.all(
  Array.from({ length: 8 }, async () => {
    for (let n = next++; n < 100; n = next++) {
      const id = `m-${n}`;
      await engine.turn({
        channel: "webhook",
        chat: { type: "direct", id },
        sender: { id },
        text: message(n),
      });
    }
  }),
);
clearInterval(sampler);
globalThis.gc?.();
globalThis.gc?.();
const { heapUsed, rss } = process.memoryUsage();
const mb = (bytes) => (bytes / 1e6).toFixed(0);
console.log(`${root}: peak RSS ${mb(peak)} MB; after a full GC heap ${mb(heapUsed)} MB, RSS ${mb(rss)} MB`);
await engine.close();
rmSync(dir, { recursive: true, force: true });
