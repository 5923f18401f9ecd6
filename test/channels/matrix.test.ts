import type { ServerResponse } from "node:http";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type RecordedRequest, startLocalServer } from "../support/http-server.js";
import { type ChannelGateway, sendJson, startChannelGateway, transcript } from "./support.js";

const env = { HS_TOKEN: "hs-secret", AS_TOKEN: "as-secret" };
const DM = "!dm:hs.local";
const GROUP = "!group:hs.local";

const text = (id: string, room: string, body: string, content: Record<string, unknown> = {}) => ({
  type: "m.room.message",
  room_id: room,
  sender: "@ann:hs.local",
  event_id: id,
  content: { msgtype: "m.text", body, ...content },
});

describe("matrix application service", () => {
  let gw: ChannelGateway;
  let hs: Awaited<ReturnType<typeof startLocalServer>>;
  const failures: Array<(res: ServerResponse) => void> = [];
  const sent: RecordedRequest[] = [];

  beforeEach(async () => {
    hs = await startLocalServer((request, res) => {
      const members = /^\/_matrix\/client\/v3\/rooms\/([^/]+)\/joined_members$/.exec(request.path);
      if (members) {
        const room = decodeURIComponent(members[1] ?? "");
        const joined =
          room === DM
            ? ["@ann:hs.local", "@bot:hs.local"]
            : ["@ann:hs.local", "@bo:hs.local", "@bot:hs.local"];
        return sendJson(res, 200, { joined: Object.fromEntries(joined.map((u) => [u, {}])) });
      }
      if (request.method === "PUT" && request.path.includes("/send/m.room.message/")) {
        const fail = failures.shift();
        if (fail) return fail(res);
        sent.push(request);
        return sendJson(res, 200, { event_id: `$reply${sent.length}` });
      }
      sendJson(res, 404, { errcode: "M_UNRECOGNIZED" });
    });
    gw = await startChannelGateway(
      {
        matrix: {
          hs_token_env: "HS_TOKEN",
          as_token_env: "AS_TOKEN",
          user_id: "@bot:hs.local",
          homeserver_url: hs.origin,
        },
      },
      env,
    );
  });
  afterEach(async () => {
    await gw.stop();
    await hs.close();
    failures.length = 0;
    sent.length = 0;
  });

  const transaction = (txn: string, events: unknown[], token: string | null = env.HS_TOKEN) =>
    fetch(gw.at(`/channels/matrix/_matrix/app/v1/transactions/${txn}`), {
      method: "PUT",
      headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify({ events }),
    });

  it("answers a direct room as a reply, with the as_token, keyed matrix:<sender>", async () => {
    expect(await (await transaction("t1", [text("$1", DM, "hi bot")])).json()).toEqual({});
    await gw.channels.idle();
    expect(transcript(await gw.entries("matrix:@ann:hs.local"))).toEqual([
      "user: hi bot",
      "assistant: re: hi bot",
    ]);
    expect(sent[0]?.headers.authorization).toBe("Bearer as-secret");
    expect(decodeURIComponent(sent[0]?.path ?? "")).toContain(`/rooms/${DM}/send/m.room.message/sessiond-`);
    expect(sent[0]?.body).toEqual({
      msgtype: "m.text",
      body: "re: hi bot",
      "m.relates_to": { "m.in_reply_to": { event_id: "$1" } },
    });
  });

  it("keys a thread by its root and answers in the thread when mentioned", async () => {
    const inThread = {
      "m.relates_to": { rel_type: "m.thread", event_id: "$root" },
      "m.mentions": { user_ids: ["@bot:hs.local"] },
    };
    await transaction("t2", [text("$2", GROUP, "bot: ideas?", inThread)]);
    await gw.channels.idle();
    expect(transcript(await gw.entries(`matrix:${GROUP}:thread:$root`))).toHaveLength(2);
    expect(sent[0]?.body).toMatchObject({
      "m.relates_to": {
        rel_type: "m.thread",
        event_id: "$root",
        is_falling_back: true,
        "m.in_reply_to": { event_id: "$2" },
      },
    });
  });

  it("refuses a missing or wrong hs_token with 401 and stores nothing", async () => {
    expect((await transaction("t3", [text("$3", DM, "x")], null)).status).toBe(401);
    expect((await transaction("t3", [text("$3", DM, "x")], "nope")).status).toBe(401);
    expect((await gw.engine.sessions.list()).sessions).toEqual([]);
  });

  it("answers a retried transaction once", async () => {
    await transaction("t4", [text("$4", DM, "once")]);
    await transaction("t4", [text("$4", DM, "once")]);
    await gw.channels.idle();
    expect(sent).toHaveLength(1);
  });

  it("stores an unmentioned group message as context; a reply to the bot's message is answered", async () => {
    await transaction("t5", [text("$5", GROUP, "@bot:hs.local start")]);
    await gw.channels.idle();
    await transaction("t6", [text("$6", GROUP, "the tests pass now")]);
    await gw.channels.idle();
    expect(sent).toHaveLength(1);
    await transaction("t7", [
      text("$7", GROUP, "and now?", { "m.relates_to": { "m.in_reply_to": { event_id: "$reply1" } } }),
    ]);
    await gw.channels.idle();
    expect(sent).toHaveLength(2);
    expect(gw.runs[1]?.messages.map((m) => m.content).slice(-2)).toEqual(["the tests pass now", "and now?"]);
  });

  it("retries the send on 429 after Retry-After (or retry_after_ms), with the same transaction id", async () => {
    failures.push(
      (res) =>
        sendJson(res, 429, { errcode: "M_LIMIT_EXCEEDED", retry_after_ms: 500 }, { "retry-after": "1" }),
      (res) => sendJson(res, 429, { errcode: "M_LIMIT_EXCEEDED", retry_after_ms: 250 }),
    );
    await transaction("t8", [text("$8", DM, "limited")]);
    await gw.channels.idle();
    expect(gw.waits).toEqual([1000, 250]);
    const puts = hs.requests.filter((r) => r.method === "PUT");
    expect(puts).toHaveLength(3);
    expect(new Set(puts.map((p) => p.path)).size).toBe(1);
  });

  it("joins a room when the bot is invited, as the bot (the as_token); another user's invite is not its", async () => {
    const invite = (id: string, room: string, invitee: string) => ({
      type: "m.room.member",
      room_id: room,
      sender: "@ann:hs.local",
      event_id: id,
      state_key: invitee,
      content: { membership: "invite" },
    });
    const joins = () => hs.requests.filter((r) => r.method === "POST" && r.path.includes("/join/"));
    expect((await transaction("t9", [invite("$9", "!other:hs.local", "@bo:hs.local")])).status).toBe(200);
    expect((await transaction("t10", [invite("$10", "!new:hs.local", "@bot:hs.local")])).status).toBe(200);
    await expect.poll(() => joins().length).toBe(1);
    expect(decodeURIComponent(joins()[0]?.path ?? "")).toBe("/_matrix/client/v3/join/!new:hs.local");
    expect(joins()[0]?.headers.authorization).toBe("Bearer as-secret");
  });
});
