import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createEngine, type Engine } from "../../src/engine.js";
import { ManualClock } from "../../src/lifecycle/clock.js";
import { openStore } from "../../src/store/open.js";
import { SqliteInbox } from "../../src/store/sqlite/inbox.js";
import { crashedState, dm, recoversEveryStage, START } from "./recovery-scenario.js";

let dataDir = "";
let engine: Engine | undefined;

afterEach(async () => {
  await engine?.close();
  engine = undefined;
  rmSync(dataDir, { recursive: true, force: true });
});

async function open(): Promise<Engine> {
  const clock = new ManualClock(START);
  engine = await createEngine({
    dataDir,
    titles: { enabled: false },
    lifecycle: { sweepIntervalMs: 0, clock, timer: clock },
    queue: { debounceMs: 0 },
  });
  return engine;
}

describe("engine.recover after a crash", () => {
  it("marks answered inputs done, reports cut-off and stale ones, runs the rest in order, and never twice", async () => {
    dataDir = mkdtempSync(join(tmpdir(), "sessiond-recover-"));
    const path = join(dataDir, "sessiond.db");
    await recoversEveryStage(async () => {
      const store = await openStore({ backend: "sqlite", path });
      const inbox = new SqliteInbox({ path });
      const ids = await crashedState(store, inbox);
      await inbox.close();
      await store.close();
      return ids;
    }, open);
  });

  it("stores an agent turn's input in the inbox before the turn is acknowledged", async () => {
    dataDir = mkdtempSync(join(tmpdir(), "sessiond-recover-"));
    const engine = await open();
    const started = await engine.start(dm("5", "hello", "tg-1"));
    // Acknowledged: the item is on disk, readable by another connection to the file.
    const reader = new SqliteInbox({ path: join(dataDir, "sessiond.db") });
    expect(await reader.get(started.id)).toMatchObject({ key: "telegram:5", envelope: { text: "hello" } });
    await started.result;
    await reader.close();
    // A redelivery is not admitted again and does not run again.
    const redelivered = await engine.start(dm("5", "hello", "tg-1"));
    expect((await redelivered.result).deduplicated).toBe(true);
  });

  it("keeps a JSONL store's inbox in its .sessiond folder, and none with turns.inbox false", async () => {
    dataDir = mkdtempSync(join(tmpdir(), "sessiond-recover-"));
    const sessions = join(dataDir, "sessions");
    engine = await createEngine({
      dataDir,
      store: { backend: "jsonl", path: sessions },
      titles: { enabled: false },
      lifecycle: { sweepIntervalMs: 0 },
    });
    expect(engine.inbox?.backend).toBe("jsonl");
    const started = await engine.start(dm("6", "to the file"));
    expect(readFileSync(join(sessions, ".sessiond", "inbox.jsonl"), "utf8")).toContain(started.id);
    await started.result;
    await engine.close();
    engine = await createEngine({
      dataDir,
      store: { backend: "memory" },
      turns: { inbox: false },
      lifecycle: { sweepIntervalMs: 0 },
    });
    expect(engine.inbox).toBeUndefined();
    expect((await (await engine.start(dm("6", "not stored"))).result).reply).toBeDefined();
  });

  it("prunes items finished more than a day before recovery", async () => {
    dataDir = mkdtempSync(join(tmpdir(), "sessiond-recover-"));
    const first = await open();
    const started = await first.start(dm("7", "old news"));
    await started.result;
    expect(await first.inbox?.get(started.id)).toMatchObject({ state: "done" });
    await first.close();
    const clock = new ManualClock(START + 24 * 3600_000 + 1);
    engine = await createEngine({
      dataDir,
      titles: { enabled: false },
      lifecycle: { sweepIntervalMs: 0, clock },
    });
    await engine.recover();
    expect(await engine.inbox?.get(started.id)).toBeUndefined();
  });
});
