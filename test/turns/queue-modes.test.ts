import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createEngine, type Engine } from "../../src/engine.js";
import { ManualClock } from "../../src/lifecycle/clock.js";
import type { Envelope } from "../../src/model/envelope.js";
import type { QueueSettings } from "../../src/model/queue.js";
import type { TurnResult } from "../../src/turns/turn.js";
import { until } from "../support/event-loop.js";
import { HeldRuntime } from "../support/held-runtime.js";

const KEY = "telegram:42";
let engine: Engine | undefined;
let dataDir = "";
let held: HeldRuntime;
let clock: ManualClock;

afterEach(async () => {
  for (const waiting of engine?.queue.list() ?? []) engine?.queue.cancel(waiting.id);
  for (const run of held?.runs ?? []) run.release();
  await engine?.close();
  engine = undefined;
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

async function open(queue: Partial<QueueSettings> = {}): Promise<Engine> {
  dataDir = mkdtempSync(join(tmpdir(), "sessiond-queue-"));
  clock = new ManualClock(1_000_000);
  held = new HeldRuntime();
  engine = await createEngine(
    {
      dataDir,
      store: { backend: "memory" },
      titles: { enabled: false },
      agentOptions: { main: { queue } },
      lifecycle: { sweepIntervalMs: 0, clock, timer: clock },
    },
    { runtimes: new Map([["main", held.runtime]]) },
  );
  return engine;
}

function dm(text: string): Envelope {
  return { channel: "telegram", chat: { type: "direct", id: "42" }, sender: { id: "42" }, text };
}

/** Submits while a turn runs: resolves once the input is waiting in the queue. */
async function queued(e: Engine, text: string): Promise<{ settled: Promise<TurnResult>; id: string }> {
  const settled = e.turn(dm(text));
  let refused = false;
  settled.catch(() => {
    refused = true;
  });
  await until(() => refused || e.queue.list().some((q) => q.preview === text));
  const id = e.queue.list().find((q) => q.preview === text)?.id ?? "";
  return { settled, id };
}

async function transcript(e: Engine): Promise<string[]> {
  return (await e.history(KEY)).map((entry) =>
    entry.type === "message"
      ? `${entry.role}:${entry.content}`
      : `${entry.type}:${"code" in entry ? entry.code : ""}`,
  );
}

describe("queue modes (engine, a runtime held until released, the engine's manual clock)", () => {
  it("followup: queued messages run one turn each, in arrival order, after the debounce", async () => {
    const e = await open();
    const a = e.turn(dm("A"));
    await held.started(1);
    const b = await queued(e, "B");
    const c = await queued(e, "C");
    expect(e.queue.list().map((q) => [q.preview, q.mode])).toEqual([
      ["B", "followup"],
      ["C", "followup"],
    ]);
    held.runs[0]?.release();
    expect((await a).reply?.content).toBe("partial:A done");
    clock.advance(499);
    await until(() => e.queue.list().length === 2);
    expect(held.runs).toHaveLength(1);
    clock.advance(1);
    await held.started(2);
    expect(held.runs[1]?.input).toBe("B");
    held.runs[1]?.release();
    expect((await b.settled).reply?.content).toBe("partial:B done");
    // C arrived long enough ago: no further wait.
    await held.started(3);
    held.runs[2]?.release();
    expect((await c.settled).reply?.content).toBe("partial:C done");
    expect(await transcript(e)).toEqual([
      "user:A",
      "assistant:partial:A done",
      "user:B",
      "assistant:partial:B done",
      "user:C",
      "assistant:partial:C done",
    ]);
  });

  it("debounce: every arrival restarts the quiet time before the batch starts", async () => {
    const e = await open({ mode: "collect", debounceMs: 1000 });
    const a = e.turn(dm("A"));
    await held.started(1);
    const b = await queued(e, "B");
    clock.advance(900);
    const c = await queued(e, "C");
    held.runs[0]?.release();
    await a;
    clock.advance(900);
    await until(() => e.queue.list().length === 2);
    expect(held.runs).toHaveLength(1);
    clock.advance(100);
    await held.started(2);
    held.runs[1]?.release();
    expect((await b.settled).reply?.content).toBe("partial:C done");
    expect((await c.settled).input?.content).toBe("C");
  });

  it("collect: messages that arrive during a turn become one follow-up turn, each its own user entry", async () => {
    const e = await open({ mode: "collect" });
    const a = e.turn(dm("A"));
    await held.started(1);
    const waiting = [await queued(e, "B"), await queued(e, "C"), await queued(e, "D")];
    held.runs[0]?.release();
    await a;
    clock.advance(500);
    await held.started(2);
    expect(held.runs[1]?.input).toBe("D");
    expect(held.runs[1]?.userMessages.slice(-3)).toEqual(["B", "C", "D"]);
    held.runs[1]?.release();
    const results = await Promise.all(waiting.map((w) => w.settled));
    expect(new Set(results.map((r) => r.reply?.id)).size).toBe(1);
    expect(held.runs).toHaveLength(2);
    expect(await transcript(e)).toEqual([
      "user:A",
      "assistant:partial:A done",
      "user:B",
      "user:C",
      "user:D",
      "assistant:partial:D done",
    ]);
  });

  it("interrupt: a new message aborts the running turn, whose partial reply is kept as such, and runs next", async () => {
    const e = await open({ mode: "interrupt" });
    const a = e.turn(dm("A"));
    a.catch(() => {});
    await held.started(1);
    const b = await queued(e, "B");
    await expect(a).rejects.toMatchObject({ code: "TURN_INTERRUPTED" });
    expect(held.runs[0]?.aborted).toBe(true);
    clock.advance(500);
    await held.started(2);
    held.runs[1]?.release();
    expect((await b.settled).reply?.content).toBe("partial:B done");
    expect(await transcript(e)).toEqual([
      "user:A",
      "assistant:partial:A",
      "note:TURN_INTERRUPTED",
      "user:B",
      "assistant:partial:B done",
    ]);
  });

  it("steer: with no runtime that takes a message mid-turn, it waits as followup", async () => {
    const e = await open({ mode: "steer", debounceMs: 0 });
    const a = e.turn(dm("A"));
    await held.started(1);
    const b = await queued(e, "B");
    held.runs[0]?.release();
    await a;
    await held.started(2);
    expect(held.runs[1]?.userMessages.at(-1)).toBe("B");
    held.runs[1]?.release();
    expect((await b.settled).reply?.content).toBe("partial:B done");
  });

  describe("a full queue (cap 2), by drop policy — never silently", () => {
    it("new: refuses the newcomer with SESSION_BUSY and keeps the waiting ones", async () => {
      const e = await open({ cap: 2, drop: "new" });
      e.turn(dm("A")).catch(() => {});
      await held.started(1);
      await queued(e, "B");
      await queued(e, "C");
      await expect(e.turn(dm("D"))).rejects.toMatchObject({ code: "SESSION_BUSY" });
      expect(e.queue.list().map((q) => q.preview)).toEqual(["B", "C"]);
    });

    it("old: drops the oldest waiting message, tells its caller and notes it in the session", async () => {
      const e = await open({ cap: 2, drop: "old" });
      const a = e.turn(dm("A"));
      await held.started(1);
      const b = await queued(e, "B");
      await queued(e, "C");
      await queued(e, "D");
      await expect(b.settled).rejects.toMatchObject({ code: "QUEUE_DROPPED" });
      expect(e.queue.list().map((q) => q.preview)).toEqual(["C", "D"]);
      held.runs[0]?.release();
      await a;
      const dropNote = async () =>
        (await e.history(KEY)).find((x) => x.type === "note" && x.code === "QUEUE_DROPPED");
      for (let i = 0; i < 1000 && !(await dropNote()); i++) await new Promise<void>((r) => setImmediate(r));
      const note = await dropNote();
      expect(note?.type === "note" && note.text).toBe(
        '[1 queued message dropped while the queue was full: "B"]',
      );
    });

    it("summarize: folds the dropped messages into one entry the next turn sees", async () => {
      const e = await open({ cap: 2, drop: "summarize" });
      const a = e.turn(dm("A"));
      await held.started(1);
      const b = await queued(e, "B");
      const c = await queued(e, "C");
      await queued(e, "D");
      await queued(e, "E");
      await expect(b.settled).rejects.toMatchObject({ code: "QUEUE_DROPPED" });
      await expect(c.settled).rejects.toMatchObject({ code: "QUEUE_DROPPED" });
      held.runs[0]?.release();
      await a;
      clock.advance(500);
      await held.started(2);
      expect(held.runs[1]?.input).toBe("D");
      expect(held.runs[1]?.userMessages.slice(-2)).toEqual([
        '[2 queued messages dropped while the queue was full: "B"; "C"]',
        "D",
      ]);
    });
  });

  it("summarize: texts folded in stay in the session as a note when every input after them is cancelled", async () => {
    const e = await open({ cap: 1, drop: "summarize" });
    const a = e.turn(dm("A"));
    await held.started(1);
    const b = await queued(e, "B");
    const c = await queued(e, "C");
    await expect(b.settled).rejects.toMatchObject({ code: "QUEUE_DROPPED" });
    // The one input that would have carried the summary leaves before its turn.
    expect(e.queue.cancel(c.id)).toBe(true);
    await expect(c.settled).rejects.toMatchObject({ code: "TURN_CANCELLED" });
    held.runs[0]?.release();
    await a;
    const dropNote = async () =>
      (await e.history(KEY)).find((entry) => entry.type === "note" && entry.code === "QUEUE_DROPPED");
    let note = await dropNote();
    for (let i = 0; i < 1000 && !note; i++) {
      await new Promise<void>((r) => setImmediate(r));
      note = await dropNote();
    }
    expect(note?.type === "note" && note.text).toBe(
      '[1 queued message dropped while the queue was full: "B"]',
    );
    // Nothing is left waiting on the key: closing does not wait for a turn that will never come.
    await e.close();
    engine = undefined;
  });

  it("/queue <mode> sets the session's mode, which the next busy moment uses", async () => {
    const e = await open();
    const set = await e.turn(dm("/queue collect"));
    expect(set.notice).toBe("Queue mode: collect.");
    expect((await e.overrides.resolve(KEY))["queue.mode"]).toEqual({ value: "collect", source: "session" });
    expect((await e.turn(dm("/queue"))).notice).toBe(
      "Queue mode: collect. Modes: followup, collect, steer, interrupt.",
    );
    expect((await e.turn(dm("/queue sideways"))).notice).toContain('Unknown queue mode "sideways"');
    // `sessiond sessions set <key> queue.mode=…` sets the same override, checked the same way.
    await expect(e.overrides.set(KEY, { "queue.mode": "sideways" })).rejects.toMatchObject({
      code: "INVALID_ARGUMENT",
    });
    await e.overrides.set(KEY, { "queue.mode": "interrupt" });
    await e.turn(dm("/queue collect"));
    e.turn(dm("A")).catch(() => {});
    await held.started(1);
    await queued(e, "B");
    expect(e.queue.list()[0]?.mode).toBe("collect");
  });

  it("cancels a waiting message by id: its caller hears TURN_CANCELLED and it never runs", async () => {
    const e = await open({ debounceMs: 0 });
    const a = e.turn(dm("A"));
    await held.started(1);
    const b = await queued(e, "B");
    expect(e.queue.cancel(b.id)).toBe(true);
    expect(e.queue.cancel(b.id)).toBe(false);
    await expect(b.settled).rejects.toMatchObject({ code: "TURN_CANCELLED" });
    held.runs[0]?.release();
    await a;
    expect(held.runs).toHaveLength(1);
    expect(e.queue.list()).toEqual([]);
  });
});
