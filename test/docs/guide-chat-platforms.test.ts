import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { platformRoutes, sendJson, slackSigned } from "../channels/support.js";
import { within } from "../gateway/postgres/gateways.js";
import { startLocalServer } from "../support/http-server.js";
import { useChatGuides } from "./guide-chat.js";
import { shell } from "./guide-steps.js";

const { followSetup, sessionKeys, delivery } = useChatGuides();
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("docs/guides/telegram.md, followed literally", () => {
  it("setWebhook registers the gateway's URL and secret; an update sent as Telegram sends it is answered", async () => {
    const registered: Record<string, string> = {};
    const { deliver, delivered } = delivery();
    const token = "123456789:AAE-the-token-from-BotFather";
    const api = await startLocalServer(
      platformRoutes({
        [`POST /bot${token}/getMe`]: (_q, res) =>
          sendJson(res, 200, { ok: true, result: { id: 123456789, is_bot: true, username: "guide_bot" } }),
        // What Telegram's setWebhook takes from curl's -d (a form) and answers.
        [`POST /bot${token}/setWebhook`]: (request, res) => {
          Object.assign(registered, Object.fromEntries(new URLSearchParams(String(request.body))));
          sendJson(res, 200, { ok: true, result: true, description: "Webhook was set" });
        },
        [`POST /bot${token}/sendMessage`]: (request, res) => {
          sendJson(res, 200, { ok: true, result: { message_id: 2 } });
          deliver(request);
        },
      }),
    );
    cleanups.push(() => api.close());
    const { guide, dir, env, gateway } = await followSetup("docs/guides/telegram.md", "telegram", api.origin);
    expect(env.TELEGRAM_BOT_TOKEN).toBe(token);
    expect(env.TELEGRAM_WEBHOOK_SECRET).toMatch(/^[0-9a-f]{64}$/);
    // Step 4, with Telegram's API the local one and the proxy's address the gateway's own.
    const register = guide.sh[1]!;
    expect(register).toHaveLength(1);
    const answer = await shell(
      register[0]!
        .replace("https://api.telegram.org", api.origin)
        .replace("https://bot.example.org", gateway.url),
      { cwd: dir, env },
    );
    expect(answer).toBe(guide.json[0]);
    expect(registered).toEqual({
      url: `${gateway.url}/channels/telegram`,
      secret_token: env.TELEGRAM_WEBHOOK_SECRET,
    });
    // Step 5: Telegram posts the update to the registered URL with the registered secret.
    const update = {
      update_id: 1,
      message: {
        message_id: 1,
        date: 1_700_000_000,
        from: { id: 42, is_bot: false, first_name: "Ada" },
        chat: { id: 42, type: "private" },
        text: "hello bot",
      },
    };
    const post = (secret?: string) =>
      fetch(registered.url!, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          ...(secret ? { "x-telegram-bot-api-secret-token": secret } : {}),
        },
        body: JSON.stringify(update),
      });
    expect((await post()).status).toBe(401);
    expect((await post("not-the-secret")).status).toBe(401);
    expect((await post(registered.secret_token)).status).toBe(200);
    const reply = (await within(60_000, "sendMessage", delivered)).body as { chat_id: number; text: string };
    expect(reply.chat_id).toBe(42);
    expect(reply.text).toContain("hello bot");
    expect(await sessionKeys(gateway)).toEqual(["telegram:42"]);
  }, 120_000);
});

describe("docs/guides/slack.md, followed literally", () => {
  it("the request URL passes Slack's signed url_verification; a direct message is answered with the bot token", async () => {
    const { deliver, delivered } = delivery();
    const api = await startLocalServer(
      platformRoutes({
        "POST /api/chat.postMessage": (request, res) => {
          sendJson(res, 200, { ok: true, ts: "1700000001.000200" });
          deliver(request);
        },
      }),
    );
    cleanups.push(() => api.close());
    const { env, gateway } = await followSetup("docs/guides/slack.md", "slack", `${api.origin}/api`);
    const markdown = readFileSync("docs/guides/slack.md", "utf8");
    const requestUrl = /\*\*Request URL\*\* to\s+`(https:\/\/[^`]+)`/.exec(markdown)?.[1];
    expect(requestUrl).toBe("https://bot.example.org/channels/slack/events");
    const url = requestUrl!.replace("https://bot.example.org", gateway.url);
    const secret = env.SLACK_SIGNING_SECRET!;
    // Step 4: the challenge Slack sends when the Request URL is saved.
    const challenge = {
      token: "Jhj5dZrVaK7ZwHHjRyZWjbDl",
      challenge: "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P",
      type: "url_verification",
    };
    const verified = await fetch(url, slackSigned(secret, challenge));
    expect(verified.status).toBe(200);
    expect(await verified.json()).toEqual({ challenge: challenge.challenge });
    expect((await fetch(url, slackSigned("another-secret", challenge))).status).toBe(401);
    // Step 5: a direct message, as the Events API delivers it.
    const event = {
      token: "Jhj5dZrVaK7ZwHHjRyZWjbDl",
      team_id: "T0001",
      api_app_id: "A0001",
      type: "event_callback",
      event_id: "Ev0001",
      event_time: 1_700_000_000,
      authorizations: [{ team_id: "T0001", user_id: "U0BOT", is_bot: true }],
      event: {
        type: "message",
        channel: "D0001",
        channel_type: "im",
        user: "U0ADA",
        text: "hello bot",
        ts: "1700000000.000100",
        event_ts: "1700000000.000100",
      },
    };
    expect((await fetch(url, slackSigned(secret, event))).status).toBe(200);
    const posted = await within(60_000, "chat.postMessage", delivered);
    expect(posted.headers.authorization).toBe(`Bearer ${env.SLACK_BOT_TOKEN}`);
    const body = posted.body as { channel: string; text: string; thread_ts?: string };
    expect(body.channel).toBe("D0001");
    expect(body.text).toContain("hello bot");
    expect(body.thread_ts).toBeUndefined();
    expect(await sessionKeys(gateway)).toEqual(["slack:U0ADA"]);
  }, 120_000);
});
