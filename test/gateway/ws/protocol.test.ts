import { afterEach, describe, expect, it } from "vitest";
import { Client, type Harness, startHarness, TOKEN } from "./helpers.js";

describe("websocket protocol frames", () => {
  let h: Harness | undefined;

  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it("answers malformed frames with an error and keeps the connection usable", async () => {
    h = await startHarness();
    const client = await Client.open(h.url({ token: TOKEN }));

    client.sendRaw("{not json");
    const bad = await client.next((f) => f.type === "res");
    expect(bad).toMatchObject({ id: null, ok: false, error: { code: "BAD_FRAME" } });

    client.sendRaw(JSON.stringify({ type: "req", id: "x1" }));
    const noMethod = await client.next((f) => f.type === "res" && f.id === "x1");
    expect(noMethod).toMatchObject({ ok: false, error: { code: "INVALID_REQUEST" } });

    client.sendRaw(JSON.stringify({ type: "req", id: "x2", method: "sessions.list", params: [1] }));
    const badParams = await client.next((f) => f.type === "res" && f.id === "x2");
    expect(badParams).toMatchObject({ ok: false, error: { code: "INVALID_REQUEST" } });

    const unknown = await client.request("sessions.explode");
    expect(unknown).toMatchObject({ ok: false, error: { code: "UNKNOWN_METHOD" } });

    const noText = await client.request("chat.send", { message: 42 });
    expect(noText).toMatchObject({ ok: false, error: { code: "INVALID_ARGUMENT" } });

    const list = await client.request("sessions.list");
    expect(list).toMatchObject({ ok: true, result: { sessions: [] } });
    await client.close();
  });

  it("closes the connection with 1009 on an oversized frame", async () => {
    h = await startHarness({ ws: { maxPayload: 1024 } });
    const client = await Client.open(h.url({ token: TOKEN }));
    client.sendRaw(
      JSON.stringify({ type: "req", id: 1, method: "chat.send", params: { message: "x".repeat(4096) } }),
    );
    expect(await client.closed).toBe(1009);
  });

  it("closes its connections with 1001 when the gateway closes", async () => {
    h = await startHarness();
    const client = await Client.open(h.url({ token: TOKEN }));
    await h.gateway.close();
    expect(await client.closed).toBe(1001);
  });
});
