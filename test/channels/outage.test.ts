import type { AddressInfo } from "node:net";
import { createServer, type Server, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { startLocalServer } from "../support/http-server.js";
import { type ChannelGateway, platformRoutes, sendJson, startChannelGateway } from "./support.js";

const TOKEN = "777:outage-token";
const env = { TG_TOKEN: TOKEN };

interface HealthBody {
  status: string;
  channels: Array<{ channel: string; state: string; error?: string; failures: number }>;
}

/** A port nothing listens on: taken from the OS, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

/** A TCP server that accepts and never answers; `close` drops the sockets it holds. */
async function silentServer(): Promise<{ origin: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((r) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => r());
      }),
  };
}

/** A gate for the supervisor's backoff: each wait is recorded and held until the test opens it. */
function gatedWaits() {
  const waits: number[] = [];
  const held: Array<() => void> = [];
  let arrived: (() => void) | undefined;
  return {
    waits,
    wait: (ms: number, signal?: AbortSignal) =>
      new Promise<void>((resolve) => {
        waits.push(ms);
        held.push(resolve);
        signal?.addEventListener("abort", () => resolve(), { once: true });
        arrived?.();
      }),
    /** Resolves once a wait is held. */
    next: () =>
      new Promise<void>((resolve) => {
        if (held.length > 0) return resolve();
        arrived = resolve;
      }),
    release: () => held.shift()?.(),
  };
}

describe("a channel whose platform cannot be reached", () => {
  let gw: ChannelGateway | undefined;
  const closers: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    await gw?.stop();
    gw = undefined;
    for (const close of closers.splice(0)) await close();
  });

  const health = async () => (await (await fetch(gw?.at("/health") ?? "")).json()) as HealthBody;

  it("connection refused: the gateway starts, says so in one line, and the channel shows retrying", async () => {
    const gate = gatedWaits();
    const base = `http://127.0.0.1:${await closedPort()}`;
    gw = await startChannelGateway(
      { telegram: { token_env: "TG_TOKEN", mode: "polling", api_base_url: base } },
      env,
      {},
      { restartWait: gate.wait },
    );
    expect(gw.startLines).toHaveLength(1);
    expect(gw.startLines[0]).toMatch(
      /^channel telegram cannot start yet \(telegram getMe could not connect: .*ECONNREFUSED.*\); retrying in the background$/,
    );
    expect(gw.startLines[0]).not.toContain(TOKEN);
    const body = await health();
    expect(body.status).toBe("ok");
    expect(body.channels).toMatchObject([{ channel: "telegram", state: "retrying", failures: 1 }]);
    // REST keeps working beside the channel that is down.
    expect((await gw.api("/api/sessions")).status).toBe(200);
    // Retried with a doubling backoff.
    await gate.next();
    gate.release();
    await gate.next();
    expect(gate.waits).toEqual([1000, 2000]);
    expect((await health()).channels[0]?.failures).toBe(2);
  });

  it("a DNS failure (a name that never resolves): the gateway starts and the channel says why it retries", async () => {
    const gate = gatedWaits();
    gw = await startChannelGateway(
      {
        telegram: {
          token_env: "TG_TOKEN",
          mode: "polling",
          api_base_url: "http://api.sessiond-test.invalid",
        },
      },
      env,
      {},
      { restartWait: gate.wait },
    );
    expect(gw.startLines).toHaveLength(1);
    expect(gw.startLines[0]).toMatch(/^channel telegram cannot start yet \(.*(ENOTFOUND|EAI_AGAIN).*\)/);
    expect(gw.startLines[0]).not.toContain(TOKEN);
    const body = await health();
    expect(body.status).toBe("ok");
    expect(body.channels).toMatchObject([{ channel: "telegram", state: "retrying", failures: 1 }]);
    expect((await gw.api("/api/sessions")).status).toBe(200);
  });

  it("a platform that accepts and never answers times out instead of holding the start", async () => {
    const silent = await silentServer();
    closers.push(() => silent.close());
    const gate = gatedWaits();
    // The in-process channel options (retry) give the per-try timeout.
    gw = await startChannelGateway(
      { telegram: { token_env: "TG_TOKEN", mode: "polling", api_base_url: silent.origin } },
      env,
      {},
      { restartWait: gate.wait, retryTimeoutMs: 300 },
    );
    expect(gw.startLines[0]).toContain("telegram getMe timed out after 300 ms");
    expect((await health()).channels[0]?.state).toBe("retrying");
  });

  it("5xx for a while: once the Bot API answers, getMe succeeds and polling delivers the waiting message", async () => {
    const gate = gatedWaits();
    let down = true;
    let sent = 0;
    let replied!: () => void;
    const reply = new Promise<void>((r) => {
      replied = r;
    });
    let served = false;
    const api = await startLocalServer(
      platformRoutes({
        [`POST /bot${TOKEN}/getMe`]: (_q, res) =>
          down
            ? sendJson(res, 502, { ok: false, description: "Bad Gateway" })
            : sendJson(res, 200, { ok: true, result: { id: 777, username: "OutageBot" } }),
        [`POST /bot${TOKEN}/getUpdates`]: (_q, res) => {
          if (down) return sendJson(res, 502, { ok: false, description: "Bad Gateway" });
          if (served) return sendJson(res, 200, { ok: true, result: [] });
          served = true;
          sendJson(res, 200, {
            ok: true,
            result: [
              {
                update_id: 5,
                message: {
                  message_id: 5,
                  from: { id: 9 },
                  chat: { id: 9, type: "private" },
                  text: "still there?",
                },
              },
            ],
          });
        },
        [`POST /bot${TOKEN}/sendMessage`]: (_q, res) => {
          sent++;
          sendJson(res, 200, { ok: true, result: { message_id: 1 } });
          replied();
        },
      }),
    );
    closers.push(() => api.close());
    gw = await startChannelGateway(
      {
        telegram: {
          token_env: "TG_TOKEN",
          mode: "polling",
          api_base_url: api.origin,
          poll_timeout_seconds: 0,
        },
      },
      env,
      {},
      { restartWait: gate.wait },
    );
    expect(gw.startLines[0]).toContain("telegram getMe answered 502: Bad Gateway");
    await gate.next();
    down = false;
    gate.release();
    await reply;
    expect(sent).toBe(1);
    expect((await health()).channels).toMatchObject([{ channel: "telegram", state: "up", failures: 0 }]);
    const metrics = await (await gw.api("/metrics")).text();
    expect(metrics).toContain('sessiond_channel_up{channel="telegram",state="up"} 1');
  });
});
