import type { ServerResponse } from "node:http";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type RecordedRequest, startLocalServer } from "../support/http-server.js";
import {
  type ChannelGateway,
  platformRoutes,
  sendJson,
  slackSigned,
  startChannelGateway,
  transcript,
} from "./support.js";

const SIGNING = "slack-signing-secret";
const env = { SLACK_TOKEN: "xoxb-test-token", SLACK_SIGNING: SIGNING };

function signed(body: unknown, options: { secret?: string; at?: number } = {}) {
  return slackSigned(options.secret ?? SIGNING, body, options.at);
}

const callback = (event: Record<string, unknown>) => ({
  type: "event_callback",
  team_id: "T1",
  api_app_id: "A1",
  authorizations: [{ user_id: "UBOT" }],
  event: { type: "message", user: "U7", channel: "C1", channel_type: "channel", ...event },
});

describe("slack events", () => {
  let gw: ChannelGateway;
  let api: Awaited<ReturnType<typeof startLocalServer>>;
  const failures: Array<(res: ServerResponse) => void> = [];
  const posted: RecordedRequest[] = [];

  beforeEach(async () => {
    api = await startLocalServer(
      platformRoutes({
        "POST /api/chat.postMessage": (request, res) => {
          const fail = failures.shift();
          if (fail) return fail(res);
          posted.push(request);
          sendJson(res, 200, { ok: true, ts: "999.1" });
        },
      }),
    );
    gw = await startChannelGateway(
      {
        slack: {
          token_env: "SLACK_TOKEN",
          signing_secret_env: "SLACK_SIGNING",
          api_base_url: `${api.origin}/api`,
        },
      },
      env,
    );
  });
  afterEach(async () => {
    await gw.stop();
    await api.close();
    failures.length = 0;
    posted.length = 0;
  });

  const post = (init: RequestInit) => fetch(gw.at("/channels/slack/events"), init);

  it("answers url_verification with its challenge", async () => {
    const res = await post(signed({ type: "url_verification", challenge: "abc" }));
    expect(await res.json()).toEqual({ challenge: "abc" });
  });

  it("answers a DM in the DM, keyed slack:<user>, with the bot token", async () => {
    await post(signed(callback({ ts: "1.1", text: "hi", channel: "D1", channel_type: "im" })));
    await gw.channels.idle();
    expect(transcript(await gw.entries("slack:U7"))).toEqual(["user: hi", "assistant: re: hi"]);
    expect(posted[0]?.body).toEqual({ channel: "D1", text: "re: hi" });
    expect(posted[0]?.headers.authorization).toBe("Bearer xoxb-test-token");
  });

  it("keys a thread reply as slack:<channel>:thread:<thread_ts> and answers in the thread", async () => {
    await post(signed(callback({ ts: "2.2", thread_ts: "2.0", text: "<@UBOT> status?" })));
    await gw.channels.idle();
    expect(transcript(await gw.entries("slack:C1:thread:2.0"))).toHaveLength(2);
    expect(posted[0]?.body).toEqual({ channel: "C1", text: "re: <@UBOT> status?", thread_ts: "2.0" });
  });

  it("refuses a bad, missing or stale signature with 401 and stores nothing", async () => {
    const body = callback({ ts: "3.3", channel_type: "im", text: "x" });
    expect((await post(signed(body, { secret: "other" }))).status).toBe(401);
    expect((await post({ method: "POST", body: JSON.stringify(body) })).status).toBe(401);
    expect((await post(signed(body, { at: Math.floor(Date.now() / 1000) - 6 * 60 }))).status).toBe(401);
    await gw.channels.idle();
    expect((await gw.engine.sessions.list()).sessions).toEqual([]);
  });

  it("answers once when a mention arrives as message and app_mention, and again as a retry", async () => {
    const text = "<@UBOT> once";
    await post(signed(callback({ ts: "4.4", text })));
    await post(signed(callback({ type: "app_mention", ts: "4.4", text })));
    await gw.channels.idle();
    await post(signed(callback({ ts: "4.4", text })));
    await gw.channels.idle();
    expect(posted).toHaveLength(1);
  });

  it("stores an unmentioned channel message as context and answers it with the next mention", async () => {
    await post(signed(callback({ ts: "5.1", text: "deploy at 5" })));
    await gw.channels.idle();
    expect(posted).toEqual([]);
    await post(signed(callback({ type: "app_mention", ts: "5.2", text: "<@UBOT> when?" })));
    await gw.channels.idle();
    expect(transcript(await gw.entries("slack:C1"))).toEqual([
      "user: deploy at 5",
      "user: <@UBOT> when?",
      "assistant: re: <@UBOT> when?",
    ]);
    expect(gw.runs[0]?.messages.map((m) => m.content)).toEqual(["deploy at 5", "<@UBOT> when?"]);
  });

  it("retries chat.postMessage on 429 after Retry-After; ok:false is recorded on the session", async () => {
    failures.push((res) => sendJson(res, 429, { ok: false, error: "ratelimited" }, { "retry-after": "7" }));
    await post(signed(callback({ ts: "6.1", text: "a", channel_type: "im", channel: "D1" })));
    await gw.channels.idle();
    expect(gw.waits).toEqual([7000]);
    expect(posted).toHaveLength(1);
    failures.push((res) => sendJson(res, 200, { ok: false, error: "channel_not_found" }));
    await post(signed(callback({ ts: "6.2", text: "b", channel_type: "im", channel: "D1" })));
    await gw.channels.idle();
    const notes = (await gw.entries("slack:U7")).filter((e) => e.type === "note");
    expect(notes).toMatchObject([
      { code: "DELIVERY_FAILED", text: expect.stringContaining("channel_not_found") },
    ]);
  });

  it("ignores bot messages and edits", async () => {
    await post(signed(callback({ ts: "7.1", text: "from a bot", bot_id: "B1", channel_type: "im" })));
    await post(
      signed(callback({ ts: "7.2", text: "edited", subtype: "message_changed", channel_type: "im" })),
    );
    await gw.channels.idle();
    expect((await gw.engine.sessions.list()).sessions).toEqual([]);
  });
});
