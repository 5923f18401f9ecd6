// Runs turns on an engine over SQLite under the fsync fault layer (test/support/fsync-faults.c) and prints
// one JSON line per step: what was acknowledged, and how each write failed once the WAL's fsync failed.
// Modes: `note` (the runner fails; the TURN_FAILED note's fsync fails), `reply` (the reply's fsync fails),
// `batch` (twenty appends at once: one batch, acknowledged by the durable barrier, whose fsync fails),
// `sync` (store.sync(): its checkpoint's fsync of the WAL fails).
import { unlinkSync, writeFileSync } from "node:fs";
import { createEngine } from "../../src/engine.js";
import { telegramDm } from "../support/envelopes.js";

const [dataDir, arm, mode] = process.argv.slice(2) as [string, string, string];
const engine = await createEngine({
  dataDir,
  titles: { enabled: false },
  lifecycle: { sweepIntervalMs: 0 },
});
const say = (line: object) => process.stdout.write(`${JSON.stringify(line)}\n`);
const failure = (error: unknown) => {
  const e = error as { code?: string; details?: { outcome?: string } };
  return { code: e.code, outcome: e.details?.outcome };
};

const first = await engine.turnWith(telegramDm("hello", "m-1"), async () => ({
  content: "hi",
  usage: { inputTokens: 3, outputTokens: 1 },
}));
say({ step: "acknowledged", ids: [first.input!.id, first.reply!.id] });

const armed = () => writeFileSync(arm, "");
if (mode === "batch") {
  armed();
  const results = await Promise.allSettled(
    Array.from({ length: 20 }, (_, i) =>
      engine.append(`telegram:batch-${i}`, [{ type: "message", role: "user", content: `b${i}` }]),
    ),
  );
  say({ step: "batch", failures: results.map((r) => (r.status === "rejected" ? failure(r.reason) : "ok")) });
} else if (mode === "sync") {
  armed();
  // Not fsync'd at its commit, so sync()'s checkpoint must sync the WAL for it: the checkpoint thread may
  // already have copied everything acknowledged before, which would leave sync() nothing to do. When it
  // had, this write starts the WAL over, and SQLite's fsync of the new WAL header is the one that fails.
  try {
    await engine.append("telegram:42", [{ type: "message", role: "user", content: "relaxed" }], {
      durability: "relaxed",
    });
    say({ step: "relaxed", ok: true });
  } catch (error) {
    say({ step: "relaxed", ...failure(error) });
  }
  try {
    await engine.store.sync();
    say({ step: "sync", ok: true });
  } catch (error) {
    say({ step: "sync", ...failure(error) });
  }
} else {
  try {
    await engine.turnWith(telegramDm("second", "m-2"), async () => {
      armed();
      if (mode === "note") throw new Error("the runtime is down");
      return { content: "second reply", usage: { inputTokens: 5, outputTokens: 2 } };
    });
    say({ step: "turn", ok: true });
  } catch (error) {
    say({ step: "turn", ...failure(error) });
  }
}
// The disk "recovers": fsyncs succeed again, but after a failed one they prove nothing.
unlinkSync(arm);
try {
  await engine.append("telegram:42", [{ type: "message", role: "user", content: "after" }]);
  say({ step: "after", ok: true });
} catch (error) {
  say({ step: "after", ...failure(error) });
}
await engine.close();
say({ step: "closed" });
