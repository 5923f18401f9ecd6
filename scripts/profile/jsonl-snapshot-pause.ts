/**
 * How long a JSONL store's backup snapshot holds its writer (store/jsonl/store-snapshot.ts): the store's
 * `snapshot()` (the journal's bytes out, then one hard link and one stat per file) on stores of N sessions,
 * each with a sidecar-free file and a claim, and what streaming the copy then takes.
 * `npx tsx scripts/profile/jsonl-snapshot-pause.ts [sessions...]` (default 1000 10000).
 */
import { createWriteStream, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
import { jsonlBackupStream } from "../../src/store/jsonl/backup-stream.js";
import { JsonlStore } from "../../src/store/jsonl/jsonl-store.js";

const counts = process.argv.slice(2).map(Number);
const init = { agent: "main", channel: "bench", createdBy: "bench" };
for (const n of counts.length > 0 ? counts : [1000, 10_000]) {
  const root = mkdtempSync(join(tmpdir(), "snapshot-pause-"));
  const store = new JsonlStore({ path: join(root, "sessions"), searchIndex: false });
  try {
    for (let i = 0; i < n; i += 500) {
      await Promise.all(
        Array.from({ length: Math.min(500, n - i) }, (_, j) =>
          store.append(`bench:${i + j}`, [{ type: "message", role: "user", content: `hello ${i + j}` }], {
            init,
          }),
        ),
      );
    }
    const pauses: number[] = [];
    for (let run = 0; run < 5; run++) {
      const start = performance.now();
      const snapshot = store.snapshot();
      pauses.push(performance.now() - start);
      snapshot.release();
    }
    const start = performance.now();
    const { stream } = jsonlBackupStream(store);
    await pipeline(stream, createWriteStream(join(root, "copy.tar.gz")));
    const copy = performance.now() - start;
    pauses.sort((a, b) => a - b);
    console.log(
      `${n} sessions: snapshot pause ${pauses[0]!.toFixed(1)}–${pauses.at(-1)!.toFixed(1)} ms (5 runs), whole copy ${copy.toFixed(0)} ms`,
    );
  } finally {
    await store.close();
    rmSync(root, { recursive: true, force: true });
  }
}
