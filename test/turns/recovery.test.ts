import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createEngine, type Engine } from "../../src/engine.js";
import { ManualClock } from "../../src/lifecycle/clock.js";
import type { Envelope } from "../../src/model/envelope.js";
import { openStore } from "../../src/store/open.js";
import { SqliteInbox } from "../../src/store/sqlite/inbox.js";
import { Admission } from "../../src/turns/admission.js";

const START = 10_000_000;
let dataDir = "";
let engine: Engine | undefined;

afterEach(async () => {
  await engine?.close();
  engine = undefined;
  rmSync(dataDir, { recursive: true, force: true });
});

function dm(id: string, text: string, platformMessageId?: string): Envelope {
  return {
    channel: "telegram",
    chat: { type: "direct", id },
    sender: { id },
    text,
    ...(platformMessageId ? { platformMessageId } : {}),
  };
}

const init = { agent: "main", channel: "telegram", chatType: "direct", createdBy: "test" } as const;

/** What a process killed mid-work leaves behind: inbox items in every stage, with or without entries. */
async function crashedState(path: string): Promise<Record<string, string>> {
  const store = await openStore({ backend: "sqlite", path });
  const inbox = new SqliteInbox({ path });
  let now = START - 11 * 60_000;
  const admission = new Admission(inbox, () => now);
  const ids: Record<string, string> = {};
  const admit = async (name: string, key: string, envelope: Envelope) => {
    const admitted = admission.admit(key, envelope);
    expect(await admitted.stored).toBe(true);
    ids[name] = admitted.id;
    return admitted;
  };
  // Admitted 11 minutes ago, never stored in its session: past the 10-minute default.
  await admit("stale", "telegram:3", dm("3", "an old question"));
  now = START - 1000;
  // Its turn stored the input and the reply; the crash came before the inbox heard.
  const answered = await admit("answered", "telegram:1", dm("1", "answered before the crash"));
  await store.append(
    "telegram:1",
    [
      {
        type: "message",
        role: "user",
        content: "answered before the crash",
        idempotencyKey: answered.envelope.platformMessageId as string,
        ts: now,
      },
      { type: "message", role: "assistant", content: "the reply", ts: now },
    ],
    { init },
  );
  // Its turn stored the input and was running when the process died.
  const cut = await admit("cut", "telegram:2", dm("2", "cut off mid-turn", "tg-7"));
  await store.append(
    "telegram:2",
    [
      {
        type: "message",
        role: "user",
        content: "cut off mid-turn",
        idempotencyKey: cut.envelope.platformMessageId as string,
        ts: now,
      },
    ],
    { init },
  );
  // Waiting in the queue: never stored in the session.
  await admit("first", "telegram:4", dm("4", "first waiting", "tg-8"));
  await admit("second", "telegram:4", dm("4", "second waiting"));
  await inbox.close();
  await store.close();
  return ids;
}

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
    const ids = await crashedState(join(dataDir, "sessiond.db"));
    const engine = await open();
    expect(await engine.recover()).toEqual({ requeued: 2, answered: 1, interrupted: 2 });
    // FIFO on the key: once this one is answered, the two recovered ones were.
    await engine.turn(dm("4", "third, new"));
    const users = (await engine.history("telegram:4")).filter((e) => e.type === "message");
    expect(users.map((e) => (e.type === "message" ? `${e.role}:${e.content}` : ""))).toEqual([
      "user:first waiting",
      expect.stringMatching(/^assistant:/),
      "user:second waiting",
      expect.stringMatching(/^assistant:/),
      "user:third, new",
      expect.stringMatching(/^assistant:/),
    ]);
    const cut = await engine.history("telegram:2");
    expect(cut.map((e) => e.type)).toEqual(["message", "note"]);
    expect(cut[1]).toMatchObject({
      code: "TURN_INTERRUPTED",
      text: expect.stringContaining("cut off by a restart"),
    });
    const stale = await engine.history("telegram:3");
    expect(stale).toHaveLength(1);
    expect(stale[0]).toMatchObject({
      code: "TURN_INTERRUPTED",
      text: 'Not run after a restart: "an old question" waited 660 s, longer than turns.recover_max_age.',
    });
    expect((await engine.history("telegram:1")).map((e) => e.type)).toEqual(["message", "message"]);

    const state = async (name: string) => (await engine.turnStatus(ids[name] as string))?.state;
    expect(await state("answered")).toBe("done");
    expect(await state("cut")).toBe("interrupted");
    expect(await state("stale")).toBe("interrupted");
    expect(await state("first")).toBe("done");
    expect(await engine.turnStatus(ids.first as string)).toMatchObject({ reply: expect.any(String) });

    // A second start finds nothing left to do: nothing is replayed.
    expect(await engine.recover()).toEqual({ requeued: 0, answered: 0, interrupted: 0 });
    await engine.close();
    const again = await open();
    expect(await again.recover()).toEqual({ requeued: 0, answered: 0, interrupted: 0 });
    expect(await again.turnStatus(ids.second as string)).toMatchObject({
      state: "done",
      replyId: expect.any(String),
    });
    expect((await again.history("telegram:4")).filter((e) => e.type === "message")).toHaveLength(6);
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
});
