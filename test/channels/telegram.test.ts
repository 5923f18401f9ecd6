import type { ServerResponse } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { type RecordedRequest, startLocalServer } from "../support/http-server.js";
import { type ChannelGateway, platformRoutes, sendJson, startChannelGateway, transcript } from "./support.js";

const TOKEN = "123456:TEST-bot-token";
const SECRET = "webhook-secret-1";
const env = { TG_TOKEN: TOKEN, TG_SECRET: SECRET };

/** A local Bot API: getMe, sendMessage (with scripted failures first), getUpdates from a queue. */
async function startBotApi() {
  const failures: Array<(res: ServerResponse) => void> = [];
  const updates: unknown[][] = [];
  const pollers: Array<(batch: unknown[]) => void> = [];
  const sent: RecordedRequest[] = [];
  const waiters: Array<() => void> = [];
  const arrived = () => {
    for (const wake of waiters.splice(0)) wake();
  };
  const server = await startLocalServer(
    platformRoutes({
      [`POST /bot${TOKEN}/getMe`]: (_q, res) =>
        sendJson(res, 200, { ok: true, result: { id: 123456, is_bot: true, username: "SessiondBot" } }),
      [`POST /bot${TOKEN}/sendMessage`]: (request, res) => {
        const fail = failures.shift();
        if (fail) return fail(res);
        sent.push(request);
        arrived();
        sendJson(res, 200, { ok: true, result: { message_id: 9000 + sent.length } });
      },
      [`POST /bot${TOKEN}/getUpdates`]: (_q, res) => {
        arrived();
        const batch = updates.shift();
        if (batch) return sendJson(res, 200, { ok: true, result: batch });
        // A long poll: held until an update is pushed (or the client goes away).
        pollers.push((next) => sendJson(res, 200, { ok: true, result: next }));
      },
    }),
  );
  return {
    ...server,
    failures,
    sent,
    /** Resolves once `done()` holds, checked after every sendMessage and getUpdates. */
    async until(done: () => boolean) {
      while (!done()) await new Promise<void>((wake) => waiters.push(wake));
    },
    push(batch: unknown[]) {
      const poller = pollers.shift();
      if (poller) poller(batch);
      else updates.push(batch);
    },
  };
}

const dm = (id: number, text: string) => ({
  update_id: 1000 + id,
  message: {
    message_id: id,
    from: { id: 42, first_name: "Ann" },
    chat: { id: 42, type: "private" },
    text,
  },
});

const inTopic = (id: number, text: string, extra: Record<string, unknown> = {}) => ({
  update_id: 2000 + id,
  message: {
    message_id: id,
    from: { id: 7, first_name: "Bo" },
    chat: { id: -1001, type: "supergroup", is_forum: true },
    message_thread_id: 55,
    is_topic_message: true,
    text,
    ...extra,
  },
});

describe("telegram webhook", () => {
  let gw: ChannelGateway;
  let api: Awaited<ReturnType<typeof startBotApi>>;
  afterEach(async () => {
    await gw?.stop();
    await api?.close();
  });

  async function start(answer?: "all") {
    api = await startBotApi();
    gw = await startChannelGateway(
      {
        telegram: {
          token_env: "TG_TOKEN",
          secret_env: "TG_SECRET",
          api_base_url: api.origin,
          ...(answer ? { answer } : {}),
        },
      },
      env,
    );
  }

  const post = (body: unknown, secret: string | null = SECRET) =>
    fetch(gw.at("/channels/telegram"), {
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...(secret ? { "x-telegram-bot-api-secret-token": secret } : {}),
      },
      body: JSON.stringify(body),
    });

  it("answers a DM in its chat, keyed telegram:<chatId>", async () => {
    await start();
    expect((await post(dm(1, "hello"))).status).toBe(200);
    await gw.channels.idle();
    expect(transcript(await gw.entries("telegram:42"))).toEqual(["user: hello", "assistant: re: hello"]);
    expect(api.sent.map((r) => r.body)).toEqual([
      {
        chat_id: 42,
        text: "re: hello",
        reply_parameters: { message_id: 1, allow_sending_without_reply: true },
      },
    ]);
  });

  it("keys a forum topic as a thread and replies into the topic", async () => {
    await start();
    const mention = { entities: [{ type: "mention", offset: 0, length: 12 }] };
    await post(inTopic(5, "@sessiondbot what now?", mention));
    await gw.channels.idle();
    expect(transcript(await gw.entries("telegram:-1001:thread:55"))).toEqual([
      "user: @sessiondbot what now?",
      "assistant: re: @sessiondbot what now?",
    ]);
    expect(api.sent[0]?.body).toMatchObject({ chat_id: -1001, message_thread_id: 55 });
  });

  it("refuses a missing or wrong secret with 401 and stores nothing", async () => {
    await start();
    expect((await post(dm(1, "hello"), null)).status).toBe(401);
    expect((await post(dm(1, "hello"), "webhook-secret-2")).status).toBe(401);
    await gw.channels.idle();
    expect((await gw.engine.sessions.list()).sessions).toEqual([]);
    expect(api.sent).toEqual([]);
  });

  it("answers a redelivered update once", async () => {
    await start();
    await post(dm(3, "once"));
    await post(dm(3, "once"));
    await gw.channels.idle();
    await post(dm(3, "once"));
    await gw.channels.idle();
    expect(api.sent).toHaveLength(1);
    expect(transcript(await gw.entries("telegram:42"))).toEqual(["user: once", "assistant: re: once"]);
  });

  it("keys dedupe by chat: the same message_id in another chat is another message", async () => {
    await start();
    await post(dm(4, "a"));
    await post({ update_id: 9, message: { ...dm(4, "b").message, chat: { id: 43, type: "private" } } });
    await gw.channels.idle();
    expect(api.sent).toHaveLength(2);
  });

  it("stores an unmentioned group message as context and answers it with the next mention", async () => {
    await start();
    await post(inTopic(10, "the build is red"));
    await gw.channels.idle();
    expect(api.sent).toEqual([]);
    expect(transcript(await gw.entries("telegram:-1001:thread:55"))).toEqual(["user: the build is red"]);
    // A reply to the bot's own message counts as addressing it.
    await post(inTopic(11, "why?", { reply_to_message: { from: { id: 123456, is_bot: true } } }));
    await gw.channels.idle();
    expect(api.sent).toHaveLength(1);
    expect(gw.runs[0]?.messages.map((m) => m.content)).toEqual(["the build is red", "why?"]);
  });

  it("answers every group message when the channel says answer: all", async () => {
    await start("all");
    await post(inTopic(12, "no mention"));
    await gw.channels.idle();
    expect(api.sent).toHaveLength(1);
  });

  it("retries a 429 after its Retry-After and a 502 with backoff", async () => {
    await start();
    api.failures.push(
      (res) => sendJson(res, 429, { ok: false, parameters: { retry_after: 3 } }, { "retry-after": "3" }),
      (res) => sendJson(res, 502, { ok: false, description: "Bad Gateway" }),
    );
    await post(dm(20, "retry me"));
    await gw.channels.idle();
    expect(api.sent).toHaveLength(1);
    expect(gw.waits).toEqual([3000, 1000]);
  });

  it("sends a reply over 4,096 characters as several messages", async () => {
    await start();
    await post(dm(22, "x".repeat(5000)));
    await gw.channels.idle();
    const texts = api.sent.map((r) => (r.body as { text: string }).text);
    expect(texts.map((t) => t.length)).toEqual([4096, 908]);
    expect(texts.join("")).toBe(`re: ${"x".repeat(5000)}`);
  });

  it("records a reply it could not deliver on the session, without the token", async () => {
    await start();
    for (let i = 0; i < 5; i++)
      api.failures.push((res) => sendJson(res, 500, { ok: false, description: "down" }));
    await post(dm(21, "lost?"));
    await gw.channels.idle();
    const notes = (await gw.entries("telegram:42")).filter((e) => e.type === "note");
    expect(notes).toMatchObject([{ code: "DELIVERY_FAILED", level: "error" }]);
    const text = JSON.stringify(notes) + JSON.stringify(gw.logs);
    expect(text).toContain("telegram sendMessage answered 500: down");
    expect(text).not.toContain("TEST-bot-token");
  });
});

describe("telegram long polling", () => {
  it("takes updates from getUpdates, moves the offset past each, and answers", async () => {
    const api = await startBotApi();
    api.push([dm(1, "polled"), dm(2, "again")]);
    const gw = await startChannelGateway(
      {
        telegram: {
          token_env: "TG_TOKEN",
          mode: "polling",
          api_base_url: api.origin,
          poll_timeout_seconds: 1,
        },
      },
      { TG_TOKEN: TOKEN },
    );
    try {
      const polls = () => api.requests.filter((r) => r.path.endsWith("/getUpdates"));
      const pollCount = () => polls().length;
      // The second poll comes once both updates are taken; answer it with a redelivery of the second.
      await api.until(() => pollCount() >= 2);
      api.push([dm(2, "again")]);
      await api.until(() => pollCount() >= 3);
      await gw.channels.idle();
      expect(polls()[0]?.body).toMatchObject({ timeout: 1 });
      expect(polls()[1]?.body).toMatchObject({ offset: 1003 });
      expect(polls()[2]?.body).toMatchObject({ offset: 1003 });
      expect(transcript(await gw.entries("telegram:42"))).toEqual([
        "user: polled",
        "assistant: re: polled",
        "user: again",
        "assistant: re: again",
      ]);
      expect(api.sent).toHaveLength(2);
      // No webhook in polling mode (the path is behind the gateway token), and an empty secret never matches.
      const hook = await fetch(gw.at("/channels/telegram"), {
        method: "POST",
        headers: { "x-telegram-bot-api-secret-token": "" },
        body: JSON.stringify(dm(50, "sneaky")),
      });
      expect(hook.status).toBe(401);
      await gw.channels.idle();
      expect(api.sent).toHaveLength(2);
    } finally {
      await gw.stop();
      await api.close();
    }
  });
});
