import { afterAll, beforeAll, expect, it } from "vitest";
import type { Runtime, RuntimeEvent, RuntimeRun } from "../../../src/runtimes/index.js";
import { postJson, startTestGateway, type TestGateway } from "./helpers.js";

let gw: TestGateway;
let running = 0;
let maxRunning = 0;

/** Answers `re: <input>` after a short wait, recording how many runs overlap. */
const slowRuntime: Runtime = {
  kind: "test",
  async *run(run: RuntimeRun): AsyncGenerator<RuntimeEvent> {
    running++;
    maxRunning = Math.max(maxRunning, running);
    try {
      await new Promise((resolve) => setTimeout(resolve, 2));
      yield { type: "text", delta: `re: ${run.input}` };
    } finally {
      running--;
    }
  },
};

beforeAll(async () => {
  gw = await startTestGateway({ maxQueuedTurns: 100 }, { runtimes: new Map([["main", slowRuntime]]) });
});
afterAll(async () => {
  await gw.stop();
});

it("answers 50 concurrent requests on one key one turn at a time, in order", async () => {
  const replies = await Promise.all(
    Array.from({ length: 50 }, (_, i) =>
      gw.api("/api/chat", postJson({ message: `msg ${i}`, session_id: "admin-busy" })).then((r) => r.json()),
    ),
  );
  replies.forEach((reply, i) => {
    expect(reply.key).toBe("admin-busy");
    expect(reply.reply).toBe(`re: msg ${i}`);
  });
  expect(maxRunning).toBe(1);
  const history = await (await gw.api("/api/sessions/admin-busy/history")).json();
  // Automatic compactions may sit between the messages; they are not part of the exchange.
  const entries = history.entries.filter((e: { type: string }) => e.type === "message");
  expect(entries).toHaveLength(100);
  // Strictly alternating: each reply directly follows the message it answers.
  for (let i = 0; i < entries.length; i += 2) {
    expect(entries[i]?.role).toBe("user");
    expect(entries[i + 1]).toMatchObject({ role: "assistant", content: `re: ${entries[i]?.content}` });
  }
});

it("answers SESSION_BUSY with 429 when the queue is full", async () => {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  /** Holds every run until the test releases it, so the queue's state does not depend on timing. */
  const heldRuntime: Runtime = {
    kind: "test",
    async *run(run: RuntimeRun): AsyncGenerator<RuntimeEvent> {
      await gate;
      yield { type: "text", delta: `re: ${run.input}` };
    },
  };
  const small = await startTestGateway({ maxQueuedTurns: 1 }, { runtimes: new Map([["main", heldRuntime]]) });
  const send = (i: number) =>
    small.api("/api/chat", postJson({ message: `m${i}`, session_id: "admin-q" })).then(async (r) => {
      const body = await r.json();
      return r.status === 429 ? body.error.code : r.status;
    });
  const depth = () => small.engine.queued().get("admin-q") ?? 0;
  const until = async (condition: () => boolean) => {
    while (!condition()) await new Promise((resolve) => setImmediate(resolve));
  };
  try {
    const running = send(1);
    await until(() => depth() === 1);
    const queued = send(2);
    await until(() => depth() === 2);
    expect(await send(3)).toBe("SESSION_BUSY");
    release();
    expect(await Promise.all([running, queued])).toEqual([200, 200]);
  } finally {
    release();
    await small.stop();
  }
});
