import { afterEach, describe, expect, it, vi } from "vitest";
import type { RuntimeEvent, RuntimeRun } from "../../../src/index.js";
import type { Runtime } from "../../../src/model/runtime.js";
import { Client, type Harness, startHarness, TOKEN, upgradeStatus } from "./helpers.js";

/** A runtime whose turns wait until `release()`, then run at once. */
function heldRuntime() {
  let release!: () => void;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const runtime: Runtime = {
    kind: "echo",
    keeps: { runtimeSessions: false, costs: false },
    async *run(run: RuntimeRun): AsyncGenerator<RuntimeEvent, void, undefined> {
      await released;
      yield { type: "text", delta: `re: ${run.input}` };
    },
  };
  return { runtime, release };
}

describe("websocket limits", () => {
  let harness: Harness | undefined;
  afterEach(async () => {
    await harness?.close();
    harness = undefined;
  });

  it("answers requests past the in-flight cap with TOO_MANY_REQUESTS at once; the others still run", async () => {
    const held = heldRuntime();
    harness = await startHarness({ runtime: held.runtime, ws: { maxInFlight: 3 } });
    const client = await Client.open(harness.url({ token: TOKEN }));
    const sends = Array.from({ length: 5 }, (_, i) =>
      client.request("chat.send", { message: `m${i}`, session: `websocket:s${i}` }),
    );
    const refused = await Promise.all([sends[3], sends[4]]);
    for (const res of refused) expect(res?.error?.code).toBe("TOO_MANY_REQUESTS");
    // Freed slots take requests again.
    held.release();
    const done = await Promise.all(sends.slice(0, 3));
    expect(done.map((r) => r.ok)).toEqual([true, true, true]);
    expect((await client.request("chat.send", { message: "later" })).ok).toBe(true);
    await client.close();
  });

  it("conversations.history answers at most 1000 entries and says there are more; a larger limit is refused", async () => {
    harness = await startHarness();
    const key = "websocket:long";
    const entries = Array.from({ length: 1200 }, (_, i) => ({
      type: "message" as const,
      role: "user" as const,
      content: `line ${i}`,
    }));
    await harness.engine.append(key, entries);
    const client = await Client.open(harness.url({ token: TOKEN }));
    const page = await client.call("conversations.history", { session: key });
    const got = page.entries as Array<{ content: string; seq: number }>;
    expect(got).toHaveLength(1000);
    expect(got.at(-1)?.content).toBe("line 1199");
    expect(page.more).toBe(true);
    const rest = await client.call("conversations.history", { session: key, before: got[0]?.seq });
    expect((rest.entries as unknown[]).length).toBe(200);
    expect(rest.more).toBe(false);
    const tooMany = await client.request("conversations.history", { session: key, limit: 5000 });
    expect(tooMany.error?.code).toBe("INVALID_ARGUMENT");
    await client.close();
  });

  it("conversations.list pages at its limit with a cursor", async () => {
    harness = await startHarness();
    for (let i = 0; i < 5; i++) {
      await harness.engine.append(`websocket:c${i}`, [{ type: "message", role: "user", content: "hi" }]);
    }
    const client = await Client.open(harness.url({ token: TOKEN }));
    const first = await client.call("conversations.list", { limit: 2 });
    expect((first.conversations as unknown[]).length).toBe(2);
    const seen = new Set((first.conversations as Array<{ id: string }>).map((c) => c.id));
    let cursor = first.nextCursor as string | undefined;
    while (cursor !== undefined) {
      const page = await client.call("conversations.list", { limit: 2, cursor });
      for (const c of page.conversations as Array<{ id: string }>) seen.add(c.id);
      cursor = page.nextCursor as string | undefined;
    }
    expect(seen.size).toBe(5);
    await client.close();
  });

  it("a client that sends and never reads is paused, then closed with 1008, and the gateway stays small", async () => {
    const logs: Array<Record<string, unknown>> = [];
    const log = (fields: Record<string, unknown>, msg?: string) => logs.push({ ...fields, msg });
    harness = await startHarness({
      logger: { info: log, warn: log, error: log },
      ws: { sendHighWaterBytes: 256 * 1024, sendMaxBytes: 2 * 1024 * 1024, stallMs: 60_000 },
    });
    const key = "websocket:big";
    const big = "x".repeat(2000);
    await harness.engine.append(
      key,
      Array.from({ length: 1000 }, () => ({ type: "message" as const, role: "user" as const, content: big })),
    );
    const history = vi.spyOn(harness.engine, "history");
    const client = await Client.open(harness.url({ token: TOKEN }));
    // The client stops reading, then sends 400 requests of ~2 MB replies each.
    client.socket.pause();
    for (let i = 0; i < 400; i++) {
      client.sendRaw(
        JSON.stringify({ type: "req", id: i, method: "conversations.history", params: { session: key } }),
      );
    }
    await vi.waitFor(
      () => expect(logs.some((l) => String(l.msg).includes("the client does not read"))).toBe(true),
      {
        timeout: 20_000,
      },
    );
    // Reading stopped with the connection: far fewer than the 400 requests ran.
    expect(history.mock.calls.length).toBeLessThan(400);
    client.socket.resume();
    expect(await client.closed).toBe(1008);
    // Another client is served as before.
    const other = await Client.open(harness.url({ token: TOKEN }));
    expect((await other.call("conversations.history", { session: key, limit: 1 })).more).toBe(true);
    await other.close();
  });

  it("refuses a connection past the cap with 429", async () => {
    harness = await startHarness({ ws: { maxConnections: 2 } });
    const a = await Client.open(harness.url({ token: TOKEN }));
    const b = await Client.open(harness.url({ token: TOKEN }));
    expect(await upgradeStatus(harness.url({ token: TOKEN }))).toBe(429);
    await a.close();
    await vi.waitFor(async () =>
      expect(await upgradeStatus(harness?.url({ token: TOKEN }) ?? "")).toBe("open"),
    );
    await b.close();
  });
});
