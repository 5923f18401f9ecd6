import { afterEach, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { startTestGateway, type TestGateway, TOKEN } from "./helpers.js";

describe("the gateway serves the WebSocket protocol beside HTTP", () => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.stop();
    gateway = undefined;
  });

  it("answers protocol requests on /ws of the same server, and closes its sockets on shutdown", async () => {
    gateway = await startTestGateway();
    const url = `${gateway.url.replace("http", "ws")}/ws?token=${TOKEN}&channel=web`;
    const socket = new WebSocket(url);
    const frames: Array<{ type: string; id?: string; ok?: boolean; result?: unknown; event?: string }> = [];
    const answered = new Promise<void>((resolve) => {
      socket.on("message", (data) => {
        const frame = JSON.parse(String(data)) as (typeof frames)[number];
        frames.push(frame);
        if (frame.type === "res" && frame.id === "1") resolve();
      });
    });
    await new Promise<void>((resolve, reject) => {
      socket.once("open", () => resolve());
      socket.once("error", reject);
    });
    socket.send(
      JSON.stringify({ type: "req", id: "1", method: "chat.send", params: { message: "hello over ws" } }),
    );
    await answered;
    const res = frames.find((f) => f.type === "res" && f.id === "1")!;
    expect(res.ok).toBe(true);
    expect(JSON.stringify(res.result)).toContain("admin-conn-");
    expect(frames.some((f) => f.type === "event" && f.event === "chat.delta")).toBe(true);

    const closed = new Promise<number>((resolve) => socket.once("close", (code) => resolve(code)));
    await gateway.stop();
    gateway = undefined;
    expect(await closed).toBe(1001);
  });
});
