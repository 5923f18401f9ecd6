import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createEngine, type Engine } from "../../src/engine.js";
import { ManualClock } from "../../src/lifecycle/clock.js";
import { newId } from "../../src/model/ids.js";
import { openStore } from "../../src/store/open.js";
import { SqliteInbox } from "../../src/store/sqlite/inbox.js";
import { admissionOf, admittedEnvelope } from "../../src/turns/admission.js";
import { SECRET_CORPUS, telltales } from "../support/secret-corpus.js";
import { crashedState, dm, recoversEveryStage, START } from "./recovery-scenario.js";

const secretOf = (name: string) => SECRET_CORPUS.find((s) => s.name === name)?.secret ?? "";

/** The WAL's text, where a commit lives until a checkpoint copies it into the file. */
function readWal(dir: string): string {
  try {
    return readFileSync(join(dir, "sessiond.db-wal"), "latin1");
  } catch {
    return "";
  }
}

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

  it("never runs again an input already stored in an earlier generation of its key", async () => {
    dataDir = mkdtempSync(join(tmpdir(), "sessiond-recover-"));
    const path = join(dataDir, "sessiond.db");
    const store = await openStore({ backend: "sqlite", path });
    const inbox = new SqliteInbox({ path });
    const at = START - 1000;
    const id = newId(at);
    const envelope = dm("6", "asked before the reset");
    expect((await inbox.admit(admissionOf(id, "telegram:6", envelope, at))).admitted).toBe(true);
    // Its turn stored the input; then the key was reset (a client history that did not continue, a `/new`
    // elsewhere) before the crash: the input is in the archived generation, not the current one.
    await store.append(
      "telegram:6",
      [
        {
          type: "message",
          role: "user",
          content: envelope.text,
          idempotencyKey: admittedEnvelope(id, envelope).platformMessageId as string,
          ts: at,
        },
      ],
      { init: { agent: "main", channel: "telegram", chatType: "direct", createdBy: "test" } },
    );
    await store.reset("telegram:6", "manual");
    await inbox.close();
    await store.close();

    const engine = await open();
    expect(await engine.recover()).toEqual({ requeued: 0, answered: 0, interrupted: 1 });
    await engine.idle("telegram:6");
    const current = await engine.history("telegram:6");
    expect(current.filter((e) => e.type === "message")).toEqual([]);
    expect(await engine.turnStatus(id)).toMatchObject({ state: "interrupted" });
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

  it("keeps no secret of an input in the inbox: not its text, sender, parts or the client's earlier messages", async () => {
    dataDir = mkdtempSync(join(tmpdir(), "sessiond-recover-"));
    const engine = await open();
    const gh = secretOf("GitHub classic token");
    const npm = secretOf("npm token, bare");
    const started = await engine.start({
      ...dm("6", `deploy with ${gh}`, "tg-6"),
      sender: { id: "6", name: `ops ${npm}` },
      parts: [{ kind: "file", url: `https://x.test/f?token=${npm}`, name: `${gh}.txt` }],
      clientHistory: [
        { role: "user", content: `my key is ${npm}` },
        { role: "assistant", content: `noted ${gh}` },
      ],
    });
    await started.result;
    await engine.close();
    const file = readFileSync(join(dataDir, "sessiond.db"), "latin1") + readWal(dataDir);
    for (const secret of [gh, npm]) for (const piece of telltales(secret)) expect(file).not.toContain(piece);
    const reader = new SqliteInbox({ path: join(dataDir, "sessiond.db") });
    const item = await reader.get(started.id);
    await reader.close();
    expect(item?.envelope.clientHistory).toEqual([
      { role: "user", content: "my key is [redacted]" },
      { role: "assistant", content: "noted [redacted]" },
    ]);
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
