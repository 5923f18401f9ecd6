import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Runtime, RuntimeEvent, RuntimeRun } from "../../../src/index.js";
import { Client, type Harness, startHarness, TOKEN } from "./helpers.js";

/** Streams a delta, then waits for the next tick or the abort, forever until aborted. */
function slowRuntime(): Runtime {
  return {
    kind: "slow",
    async *run(run: RuntimeRun): AsyncGenerator<RuntimeEvent> {
      while (!run.signal.aborted) {
        yield { type: "text", delta: "." };
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 20);
          run.signal.addEventListener("abort", () => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
    },
  };
}

describe("websocket sessions.kill", () => {
  let h: Harness;

  beforeEach(async () => {
    h = await startHarness({ runtime: slowRuntime() });
  });

  afterEach(async () => {
    await h.close();
  });

  it("aborts a running chat.send turn and keeps the session's data", async () => {
    const talker = await Client.open(h.url({ token: TOKEN, channel: "cli", peer: "lee" }));
    const admin = await Client.open(h.url({ token: TOKEN, channel: "cli", peer: "admin" }));
    const key = `p2p:lee:${h.engine.routing.defaultAgent}`;

    const reply = talker.request("chat.send", { message: "talk forever" });
    await talker.next((f) => f.event === "chat.delta");
    const listed = await admin.call("sessions.list");
    expect(listed.sessions).toEqual([expect.objectContaining({ id: key, active: true })]);

    expect(await admin.call("sessions.kill", { session: key })).toEqual({ key, killed: true });
    expect(await reply).toMatchObject({ ok: false, error: { code: "TURN_CANCELLED" } });

    expect(await admin.call("sessions.kill", { session: key })).toEqual({ key, killed: false });
    const history = await admin.call("conversations.history", { session: key });
    expect((history.entries as Array<{ content?: string }>).map((e) => e.content)).toContain("talk forever");
    await Promise.all([talker.close(), admin.close()]);
  });

  it("a connection can kill its own turn without naming the session", async () => {
    const client = await Client.open(h.url({ token: TOKEN, channel: "web" }));
    const reply = client.request("chat.send", { message: "go" });
    await client.next((f) => f.event === "chat.delta");
    expect(await client.call("sessions.kill")).toEqual({
      key: `admin-conn-${client.connectionId}`,
      killed: true,
    });
    expect(await reply).toMatchObject({ ok: false, error: { code: "TURN_CANCELLED" } });
    await client.close();
  });

  it("the gateway's close aborts running turns", async () => {
    const client = await Client.open(h.url({ token: TOKEN, channel: "cli", peer: "max" }));
    void client.request("chat.send", { message: "go" });
    await client.next((f) => f.event === "chat.delta");
    await h.gateway.close();
    expect(await client.closed).toBe(1001);
    expect(h.engine.queued().size).toBe(0);
  });
});

describe("websocket shutdown with a grace period", () => {
  it("lets a running turn finish, refuses new requests, then closes with 1001", async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const gated: Runtime = {
      kind: "gated",
      async *run(): AsyncGenerator<RuntimeEvent> {
        yield { type: "text", delta: "started " };
        await released;
        yield { type: "text", delta: "and finished" };
      },
    };
    const h = await startHarness({ runtime: gated });
    const client = await Client.open(h.url({ token: TOKEN, channel: "cli", peer: "kim" }));
    const reply = client.request("chat.send", { message: "finish me" });
    await client.next((f) => f.event === "chat.delta");
    const closing = h.gateway.close(60_000);
    expect(await client.request("sessions.list")).toMatchObject({
      ok: false,
      error: { code: "SHUTTING_DOWN" },
    });
    release();
    expect(await reply).toMatchObject({ ok: true, result: { reply: "started and finished" } });
    await closing;
    expect(await client.closed).toBe(1001);
    await h.close();
  });
});
