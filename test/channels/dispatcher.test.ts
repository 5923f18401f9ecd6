import { describe, expect, it } from "vitest";
import { ChannelDispatcher } from "../../src/channels/dispatcher.js";
import type { SeenMessages } from "../../src/channels/seen/seen.js";
import type { ChannelHost, Inbound } from "../../src/channels/types.js";
import type { Engine } from "../../src/engine.js";
import { SessiondError } from "../../src/model/errors.js";
import type { Runtime, RuntimeEvent } from "../../src/model/runtime.js";
import type { TurnResult } from "../../src/turns/turn.js";
import { startLocalServer } from "../support/http-server.js";
import { platformRoutes, sendJson, startChannelGateway, transcript } from "./support.js";

/** An echo runtime whose runs wait until `release()`; `running` resolves when the first one starts. */
function heldRuntime(): { slow: Runtime; running: Promise<void>; release: () => void } {
  let release!: () => void;
  const held = new Promise<void>((r) => {
    release = r;
  });
  let started!: () => void;
  const running = new Promise<void>((r) => {
    started = r;
  });
  const slow: Runtime = {
    kind: "echo",
    async *run(run): AsyncGenerator<RuntimeEvent> {
      started();
      await held;
      yield { type: "text", delta: `re: ${run.input}` };
    },
  };
  return { slow, running, release };
}

/** A local Bot API that knows the bot and takes every sendMessage. */
function telegramApi() {
  return startLocalServer(
    platformRoutes({
      "POST /bot1:t/getMe": (_q, res) => sendJson(res, 200, { ok: true, result: { id: 1, username: "b" } }),
      "POST /bot1:t/sendMessage": (_q, res) => sendJson(res, 200, { ok: true, result: {} }),
    }),
  );
}

it("says 503 CHANNEL_BUSY past maxPending, stores nothing for that message, and takes its redelivery later", async () => {
  const { slow, running, release } = heldRuntime();
  const api = await telegramApi();
  const gw = await startChannelGateway(
    { telegram: { token_env: "T", secret_env: "S", api_base_url: api.origin } },
    { T: "1:t", S: "s" },
    {},
    { maxPending: 1, runtime: slow },
  );
  const post = (id: number, chat: number) =>
    fetch(gw.at("/channels/telegram"), {
      method: "POST",
      headers: { "x-telegram-bot-api-secret-token": "s" },
      body: JSON.stringify({
        update_id: id,
        message: { message_id: id, from: { id: chat }, chat: { id: chat, type: "private" }, text: `m${id}` },
      }),
    });
  try {
    expect((await post(1, 10)).status).toBe(200);
    await running;
    const busy = await post(2, 20);
    expect(busy.status).toBe(503);
    expect(((await busy.json()) as { error: { code: string } }).error.code).toBe("CHANNEL_BUSY");
    expect(await gw.engine.sessions.get("telegram:20")).toBeUndefined();
    release();
    await gw.channels.idle();
    expect((await post(2, 20)).status).toBe(200);
    await gw.channels.idle();
    expect(transcript(await gw.entries("telegram:20"))).toEqual(["user: m2", "assistant: re: m2"]);
  } finally {
    await gw.stop();
    await api.close();
  }
});

it("keeps a message whose session's queue is full, with a SESSION_BUSY note, instead of losing it", async () => {
  const { slow, running, release } = heldRuntime();
  const api = await telegramApi();
  const gw = await startChannelGateway(
    { telegram: { token_env: "T", secret_env: "S", api_base_url: api.origin } },
    { T: "1:t", S: "s" },
    { maxQueuedTurns: 0 },
    { runtime: slow },
  );
  const post = (id: number) =>
    fetch(gw.at("/channels/telegram"), {
      method: "POST",
      headers: { "x-telegram-bot-api-secret-token": "s" },
      body: JSON.stringify({
        update_id: id,
        message: { message_id: id, from: { id: 10 }, chat: { id: 10, type: "private" }, text: `m${id}` },
      }),
    });
  try {
    await post(1);
    await running;
    const noted = new Promise<void>((resolve) => {
      const off = gw.engine.events.on((event) => {
        if (event.type === "appended" && event.entries.some((e) => e.type === "note")) {
          off();
          resolve();
        }
      });
    });
    await post(2);
    await noted;
    release();
    await gw.channels.idle();
    const entries = await gw.entries("telegram:10");
    expect(transcript(entries)).toEqual(["user: m1", "user: m2", "assistant: re: m1"]);
    expect(entries.filter((e) => e.type === "note")).toMatchObject([{ code: "SESSION_BUSY" }]);
  } finally {
    await gw.stop();
    await api.close();
  }
});

describe("the platform hears a message was taken", () => {
  const silent = { info: () => {}, warn: () => {}, error: () => {} };
  const seen = (): SeenMessages => {
    const ids = new Set<string>();
    return {
      claim: async (id) => !ids.has(id) && Boolean(ids.add(id)),
      forget: async (id) => {
        ids.delete(id);
      },
      close: async () => {},
    } as SeenMessages;
  };
  const inbound: Inbound = {
    envelope: {
      channel: "telegram",
      account: "bot",
      chat: { type: "direct", id: "7" },
      sender: { id: "7" },
      text: "hi",
      platformMessageId: "42",
    },
    addressed: true,
    reply: async () => {},
  };
  const answered: TurnResult = { key: "telegram:7", sessionId: "s", deduplicated: true };

  it("only once its turn's input is durable", async () => {
    let admit!: () => void;
    const admitted = new Promise<void>((resolve) => {
      admit = resolve;
    });
    const host: ChannelHost = {
      engine: {} as Engine,
      startTurn: async () => {
        await admitted;
        return { result: Promise.resolve(answered) };
      },
      logger: silent,
      bodyLimit: 1_000_000,
    };
    const dispatcher = new ChannelDispatcher(host, 10, async () => seen());
    let received: string | undefined;
    const receiving = dispatcher
      .receiver(false)(inbound)
      .then((r) => {
        received = r;
      });
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(received).toBeUndefined();
    admit();
    await receiving;
    expect(received).toBe("turn");
    await dispatcher.drain();
  });

  it("never when its input could not be stored: the redelivery is taken, not a duplicate", async () => {
    let starts = 0;
    const host: ChannelHost = {
      engine: {} as Engine,
      startTurn: async () => {
        starts++;
        if (starts === 1) throw new SessiondError("STORE_UNAVAILABLE", "the store is down");
        return { result: Promise.resolve(answered) };
      },
      logger: silent,
      bodyLimit: 1_000_000,
    };
    const dispatcher = new ChannelDispatcher(host, 10, async () => seen());
    const receive = dispatcher.receiver(false);
    await expect(receive(inbound)).rejects.toMatchObject({ code: "STORE_UNAVAILABLE" });
    expect(await receive(inbound)).toBe("turn");
    expect(starts).toBe(2);
    await dispatcher.drain();
  });
});
