import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEngine, type Engine } from "../../src/engine.js";
import { ManualClock } from "../../src/lifecycle/clock.js";
import { PostgresStore } from "../../src/store/postgres/postgres-store.js";
import { type PostgresCluster, startPostgres } from "../support/postgres.js";
import { crashedState, recoversEveryStage, START } from "./recovery-scenario.js";

let cluster: PostgresCluster;
const dataDir = mkdtempSync(join(tmpdir(), "sessiond-pg-recover-"));
const engines: Engine[] = [];
beforeAll(async () => {
  cluster = await startPostgres();
});
afterAll(async () => {
  for (const engine of engines) await engine.close();
  await cluster?.remove();
  rmSync(dataDir, { recursive: true, force: true });
});

describe("engine.recover on the PostgreSQL inbox", () => {
  it("settles every stage a crash leaves as on SQLite, and never replays", async () => {
    const url = await cluster.createDatabase();
    await recoversEveryStage(
      async () => {
        const store = await PostgresStore.open({ url });
        const ids = await crashedState(store, store.inbox());
        await store.close();
        return ids;
      },
      async () => {
        const clock = new ManualClock(START);
        const engine = await createEngine({
          dataDir,
          store: { backend: "postgres", url },
          titles: { enabled: false },
          lifecycle: { sweepIntervalMs: 0, clock, timer: clock },
          queue: { debounceMs: 0 },
        });
        engines.push(engine);
        return engine;
      },
      // The seeding process stopped: its inputs are taken over, and the notes name it, not a restart.
      {
        cut: expect.stringMatching(/^The turn was taken over from gateway \S+:\d+:\w+ \(it stopped/),
        stale: expect.stringMatching(
          /^Not run after a take-over from gateway \S+: "an old question" waited 660 s, longer than turns\.recover_max_age\.$/,
        ),
      },
    );
  });
});
