import { createHmac } from "node:crypto";
import { Hono } from "hono";
import type { ChannelsConfig } from "./config.js";
import { secretOf } from "./config.js";
import { callPlatform, type RetryOptions } from "./deliver.js";
import { parseObject, rawBody, sameSecret, unauthorized } from "./http.js";
import { readSecret } from "./secrets.js";
import type { ChannelAdapter } from "./types.js";

type SlackSettings = NonNullable<ChannelsConfig["slack"]>;

interface SlackEvent {
  type: string;
  subtype?: string;
  bot_id?: string;
  user?: string;
  text?: string;
  ts: string;
  thread_ts?: string;
  channel: string;
  channel_type?: "im" | "mpim" | "channel" | "group";
}
interface SlackCallback {
  type: "event_callback" | "url_verification";
  challenge?: string;
  team_id?: string;
  api_app_id?: string;
  event?: SlackEvent;
  authorizations?: Array<{ user_id?: string }>;
}

/** Slack rejects a request signed more than five minutes ago (replays). */
const MAX_SKEW_SECONDS = 5 * 60;

/**
 * Slack's Events API (`message`, `app_mention`, `url_verification`), signed with the app's signing
 * secret (`v0` HMAC-SHA256 over `v0:<timestamp>:<body>`, within five minutes); replies with
 * `chat.postMessage`, into the message's thread when it came from one.
 */
export function slackChannel(
  settings: SlackSettings,
  env: NodeJS.ProcessEnv,
  retry: RetryOptions = {},
  now: () => number = Date.now,
): ChannelAdapter {
  const token = readSecret(secretOf(settings, "token"), "slack.token", env);
  const signingSecret = readSecret(secretOf(settings, "signing_secret"), "slack.signing_secret", env);
  const base = (settings.api_base_url ?? "https://slack.com/api").replace(/\/$/, "");

  const verify = (timestamp: string | undefined, signature: string | undefined, body: string) => {
    const ts = Number(timestamp);
    if (!timestamp || !Number.isInteger(ts)) throw unauthorized("missing X-Slack-Request-Timestamp");
    if (Math.abs(now() / 1000 - ts) > MAX_SKEW_SECONDS)
      throw unauthorized("the request is over five minutes old");
    const expected = `v0=${createHmac("sha256", signingSecret).update(`v0:${timestamp}:${body}`).digest("hex")}`;
    if (!sameSecret(signature, expected)) throw unauthorized("missing or wrong X-Slack-Signature");
  };

  return {
    name: "slack",
    routes: (receive, host) =>
      new Hono().post("/events", async (c) => {
        const body = await rawBody(c, host.bodyLimit);
        verify(c.req.header("x-slack-request-timestamp"), c.req.header("x-slack-signature"), body);
        const payload = parseObject(body) as unknown as SlackCallback;
        if (payload.type === "url_verification") return c.json({ challenge: payload.challenge ?? "" });
        const event = payload.event;
        // Bots' messages (ours included) and edits or deletions are not new messages.
        if (!event || (event.type !== "message" && event.type !== "app_mention")) return c.json({ ok: true });
        if (event.bot_id || event.subtype || !event.user || event.text === undefined)
          return c.json({ ok: true });
        const botUser = settings.bot_user_id ?? payload.authorizations?.[0]?.user_id;
        const direct = event.channel_type === "im";
        // A reply in a thread carries the parent's ts; a top-level message starts none of its own yet.
        const thread =
          event.thread_ts !== undefined && event.thread_ts !== event.ts ? event.thread_ts : undefined;
        const mentioned =
          event.type === "app_mention" || (botUser !== undefined && event.text.includes(`<@${botUser}>`));
        await receive({
          envelope: {
            channel: "slack",
            ...(settings.agent ? { agent: settings.agent } : {}),
            account: payload.team_id ?? payload.api_app_id ?? "slack",
            chat: {
              type: direct ? "direct" : thread ? "thread" : "group",
              id: event.channel,
              ...(thread ? { threadId: thread } : {}),
            },
            sender: { id: event.user },
            text: event.text,
            // `message` and `app_mention` both arrive for one mention: the same ts makes them one message.
            platformMessageId: event.ts,
          },
          addressed: direct || mentioned,
          reply: async (text) => {
            await callPlatform(
              {
                what: "slack chat.postMessage",
                url: `${base}/chat.postMessage`,
                headers: { authorization: `Bearer ${token}` },
                body: { channel: event.channel, text, ...(thread ? { thread_ts: thread } : {}) },
                failed: (answer) => {
                  const a = answer as { ok?: boolean; error?: string } | undefined;
                  return a?.ok === true ? undefined : (a?.error ?? "not ok");
                },
              },
              retry,
            );
          },
        });
        return c.json({ ok: true });
      }),
    describe: (gatewayUrl) => `slack: Events API request URL ${gatewayUrl}/channels/slack/events`,
  };
}
