import { EventEmitter } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { IncomingMessage, type Server, ServerResponse } from "node:http";
import { Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { getHeapStatistics } from "node:v8";
import { afterEach, describe, expect, it, vi } from "vitest";
import { shrinkHeapWhenIdle } from "../../src/gateway/idle-heap.js";
import { startTestGateway, type TestGateway } from "./http/helpers.js";

const MB = 1024 * 1024;

describe("the idle heap watch (its rule, on a fake clock)", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  function watch() {
    vi.useFakeTimers();
    const server = new EventEmitter() as unknown as Server;
    const state = { now: 0, committed: 100 * MB, loop: 0, collects: 0 };
    const handle = shrinkHeapWhenIdle(server, {
      idleMs: 5_000,
      minGrowthBytes: 16 * MB,
      now: () => state.now,
      loopUse: () => state.loop,
      committedBytes: () => state.committed,
      collect: async () => {
        state.collects++;
        state.committed = 40 * MB;
      },
    });
    const advance = async (ms: number) => {
      for (let t = 0; t < ms; t += 100) {
        state.now += 100;
        await vi.advanceTimersByTimeAsync(100);
      }
    };
    return { server, state, handle, advance };
  }

  it("shrinks once after idleMs without a request, not while requests keep coming", async () => {
    const { server, state, handle, advance } = watch();
    state.committed = 140 * MB;
    for (let i = 0; i < 30; i++) {
      server.emit("request");
      await advance(1_000);
    }
    expect(state.collects).toBe(0);
    await advance(5_500);
    expect(state.collects).toBe(1);
    // Still idle, the heap as the shrink left it: nothing more to give back.
    await advance(20_000);
    expect(state.collects).toBe(1);
    handle.stop();
  });

  it("counts no idle time while a request is open, however long it takes", async () => {
    const { server, state, handle, advance } = watch();
    state.committed = 140 * MB;
    const response = new ServerResponse(new IncomingMessage(new Socket()));
    server.emit("request", response.req, response);
    await advance(30_000);
    expect(state.collects).toBe(0);
    response.emit("close");
    await advance(4_000);
    expect(state.collects).toBe(0);
    await advance(2_000);
    expect(state.collects).toBe(1);
    handle.stop();
  });

  it("shrinks again while idle only once the heap grew back with the event loop mostly free", async () => {
    const { server, state, handle, advance } = watch();
    state.committed = 140 * MB;
    server.emit("request");
    await advance(6_000);
    expect(state.collects).toBe(1);
    // Background work (the loop busy) grows the heap again: it waits for the work to settle.
    state.loop = 0.9;
    state.committed = 80 * MB;
    await advance(10_000);
    expect(state.collects).toBe(1);
    state.loop = 0.01;
    await advance(1_500);
    expect(state.collects).toBe(2);
    // A request re-arms the first shrink; without growth there is none.
    server.emit("request");
    await advance(10_000);
    expect(state.collects).toBe(2);
    handle.stop();
  });
});

describe("the idle heap watch without an inspector", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("stops asking after a Node built without one says so", async () => {
    vi.useFakeTimers();
    const server = new EventEmitter() as unknown as Server;
    let now = 0;
    let committed = 140 * MB;
    const errors: unknown[] = [];
    let collects = 0;
    const handle = shrinkHeapWhenIdle(server, {
      idleMs: 5_000,
      now: () => now,
      loopUse: () => 0,
      committedBytes: () => committed,
      collect: async () => {
        collects++;
        throw Object.assign(new Error("Inspector is not available"), { code: "ERR_INSPECTOR_NOT_AVAILABLE" });
      },
      onError: (error) => errors.push(error),
    });
    for (let t = 0; t < 30_000; t += 500) {
      now += 500;
      committed += 4 * MB;
      await vi.advanceTimersByTimeAsync(500);
    }
    expect(collects).toBe(1);
    expect(errors).toHaveLength(1);
    handle.stop();
  });
});

describe("a real gateway, idle after 0.9 MB messages", () => {
  let gateway: TestGateway | undefined;
  const dir = mkdtempSync(join(tmpdir(), "sessiond-idle-heap-"));
  afterEach(async () => {
    await gateway?.stop();
    gateway = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  it("gives the unused heap back: its log says so and the committed heap falls", async () => {
    gateway = await startTestGateway(
      { store: { backend: "sqlite", path: join(dir, "sessiond.db") } },
      // Idle after 300 ms: the watch is the gateway's own (startGateway), as `sessiond serve` runs it.
      { idleHeapMs: 300 },
    );
    const message = "lorem ipsum dolor sit amet ".repeat(33_000);
    for (let i = 0; i < 16; i++) {
      const res = await gateway.api("/api/webhook", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ peer: `idle-${i}`, message: `${i} ${message}` }),
      });
      expect(res.status).toBe(200);
    }
    const busy = getHeapStatistics().total_heap_size;
    const logs = gateway.logs;
    // Open requests are no idle time: the shrink comes after the last one.
    const shrunk = () => logs.find((line) => line.msg === "idle: unused heap given back");
    // Waits for the log line (the test's own timeout bounds it); on the code before, there was none.
    while (!shrunk()) await new Promise((resolve) => setTimeout(resolve, 50));
    const line = shrunk() as Record<string, number>;
    const after = getHeapStatistics().total_heap_size;
    expect(line.heapAfterMb).toBeLessThan(line.heapMb as number);
    expect(line.usedAfterMb).toBeLessThanOrEqual(line.usedMb as number);
    expect(after).toBeLessThan(busy);
  }, 30_000);
});
