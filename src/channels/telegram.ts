import { Hono } from "hono";
import { HttpError } from "../gateway/errors.js";
import type { ChatType } from "../model/envelope.js";
import { SessiondError } from "../model/errors.js";
import type { ChannelsConfig } from "./config.js";
import { secretOf } from "./config.js";
import { callPlatform, pause, type RetryOptions } from "./deliver.js";
import { chunks, parseObject, rawBody, sameSecret, unauthorized } from "./http.js";
import { readSecret } from "./secrets.js";
import type { ChannelAdapter, ChannelHost, Inbound, Receive } from "./types.js";

type TelegramSettings = NonNullable<ChannelsConfig["telegram"]>;

interface TgUser {
  id: number;
  is_bot?: boolean;
  first_name?: string;
  username?: string;
}
interface TgEntity {
  type: string;
  offset: number;
  length: number;
  user?: TgUser;
}
interface TgMessage {
  message_id: number;
  from?: TgUser;
  sender_chat?: { id: number; title?: string };
  chat: { id: number; type: "private" | "group" | "supergroup" | "channel"; is_forum?: boolean };
  text?: string;
  caption?: string;
  entities?: TgEntity[];
  caption_entities?: TgEntity[];
  message_thread_id?: number;
  is_topic_message?: boolean;
  reply_to_message?: { from?: TgUser };
}
export interface TelegramUpdate {
  update_id: number;
  message?: TgMessage;
  channel_post?: TgMessage;
}

/** Waits between failed getUpdates calls: doubling from 5 s to 60 s, back to 5 s once one answers. */
const POLL_BACKOFF_MS = 5000;
const POLL_BACKOFF_MAX_MS = 60_000;

/** Telegram caps a message at 4,096 characters. */
const MAX_TEXT = 4096;

/**
 * Telegram's Bot API: webhook `Update`s (checked against `X-Telegram-Bot-Api-Secret-Token`) or long
 * polling with `getUpdates`; replies with `sendMessage`, into the forum topic the message came from.
 */
export function telegramChannel(
  settings: TelegramSettings,
  env: NodeJS.ProcessEnv,
  retry: RetryOptions = {},
): ChannelAdapter {
  const token = readSecret(secretOf(settings, "token"), "telegram.token", env);
  const mode = settings.mode ?? "webhook";
  const secret = mode === "webhook" ? readSecret(secretOf(settings, "secret"), "telegram.secret", env) : "";
  const base = (settings.api_base_url ?? "https://api.telegram.org").replace(/\/$/, "");
  // A bot token is `<bot id>:<secret>`: the id is the account, and how replies to the bot are recognised.
  const botId = Number(token.split(":")[0]);
  if (!Number.isSafeInteger(botId)) {
    throw new SessiondError("CONFIG_INVALID", "channels.telegram.token: not a bot token (<bot id>:<secret>)");
  }
  let username = settings.username?.replace(/^@/, "").toLowerCase();
  const stop = new AbortController();
  let polling: Promise<void> | undefined;

  const call = (method: string, body: unknown, options: RetryOptions = retry) =>
    callPlatform({ what: `telegram ${method}`, url: `${base}/bot${token}/${method}`, body }, options);

  // One try: at start the supervisor tries again with its backoff; on a webhook Telegram redelivers.
  const learnUsername = async () => {
    if (username !== undefined) return;
    const me = (await call("getMe", {}, { ...retry, attempts: 1 })) as { result?: TgUser };
    username = me.result?.username?.toLowerCase();
  };

  const inbound = (update: TelegramUpdate): Inbound | undefined => {
    const message = update.message ?? update.channel_post;
    const text = message?.text ?? message?.caption;
    if (!message || text === undefined) return undefined;
    const topic = message.is_topic_message ? message.message_thread_id : undefined;
    const type: ChatType =
      message.chat.type === "private"
        ? "direct"
        : message.chat.type === "channel"
          ? "channel"
          : topic !== undefined
            ? "thread"
            : "group";
    const sender = message.from
      ? { id: String(message.from.id), ...(nameOf(message.from) ? { name: nameOf(message.from) } : {}) }
      : { id: String(message.sender_chat?.id ?? message.chat.id) };
    return {
      envelope: {
        channel: "telegram",
        ...(settings.agent ? { agent: settings.agent } : {}),
        account: String(botId),
        chat: {
          type,
          id: String(message.chat.id),
          ...(topic !== undefined ? { threadId: String(topic) } : {}),
        },
        sender,
        text,
        platformMessageId: String(message.message_id),
      },
      addressed: type === "direct" || addressesBot(message, botId, username),
      reply: async (reply) => {
        for (const piece of chunks(reply, MAX_TEXT)) {
          await call("sendMessage", {
            chat_id: message.chat.id,
            text: piece,
            ...(topic !== undefined ? { message_thread_id: topic } : {}),
            reply_parameters: { message_id: message.message_id, allow_sending_without_reply: true },
          });
        }
      },
    };
  };

  const handle = async (update: TelegramUpdate, receive: Receive) => {
    const message = inbound(update);
    if (message) await receive(message);
  };

  const poll = async (receive: Receive, host: ChannelHost) => {
    let offset: number | undefined;
    const timeout = settings.poll_timeout_seconds ?? 25;
    let backoff = POLL_BACKOFF_MS;
    while (!stop.signal.aborted) {
      let updates: TelegramUpdate[];
      try {
        const answer = (await call(
          "getUpdates",
          {
            timeout,
            allowed_updates: ["message", "channel_post"],
            ...(offset !== undefined ? { offset } : {}),
          },
          { ...retry, signal: stop.signal, timeoutMs: (timeout + 15) * 1000 },
        )) as { result?: TelegramUpdate[] };
        updates = answer.result ?? [];
        if (host.status?.get("telegram")?.state !== "up") host.status?.set("telegram", "up");
        backoff = POLL_BACKOFF_MS;
      } catch (error) {
        if (stop.signal.aborted) return;
        const err = (error as Error).message;
        host.status?.set("telegram", "retrying", err);
        host.logger.warn({ channel: "telegram", err, retryInMs: backoff }, "getUpdates failed");
        await (retry.wait ?? pause)(backoff, stop.signal);
        backoff = Math.min(backoff * 2, POLL_BACKOFF_MAX_MS);
        continue;
      }
      for (const update of updates) {
        // The offset moves past an update only once it is taken: a busy gateway asks for it again.
        try {
          await handle(update, receive);
        } catch (error) {
          host.logger.warn({ channel: "telegram", err: (error as Error).message }, "update not taken");
          break;
        }
        offset = update.update_id + 1;
      }
    }
  };

  const routes = (receive: Receive, host: ChannelHost) =>
    new Hono().post("/", async (c) => {
      if (!sameSecret(c.req.header("x-telegram-bot-api-secret-token"), secret)) {
        throw unauthorized("missing or wrong X-Telegram-Bot-Api-Secret-Token");
      }
      await learnUsername().catch((error: unknown) => {
        throw new HttpError(
          503,
          "PLATFORM_UNREACHABLE",
          `telegram getMe failed, the bot's name is not known yet: ${(error as Error).message}`,
          30,
        );
      });
      await handle(parseObject(await rawBody(c, host.bodyLimit)) as unknown as TelegramUpdate, receive);
      return c.json({ ok: true });
    });

  return {
    name: "telegram",
    // Polling takes no webhook: nothing is mounted that could be called without the secret.
    ...(mode === "webhook" ? { routes } : {}),
    start: async (receive, host) => {
      await learnUsername();
      if (mode === "polling") polling = poll(receive, host);
    },
    close: async () => {
      stop.abort();
      await polling;
    },
    describe: (gatewayUrl) =>
      mode === "polling"
        ? `telegram: long polling getUpdates (${base})`
        : `telegram: webhook ${gatewayUrl}/channels/telegram`,
  };
}

function nameOf(user: TgUser): string | undefined {
  return user.username ?? user.first_name;
}

/** A group message is for the bot when it @mentions it, names it in a command, or replies to it. */
function addressesBot(message: TgMessage, botId: number, username: string | undefined): boolean {
  if (message.reply_to_message?.from?.id === botId) return true;
  const text = message.text ?? message.caption ?? "";
  for (const entity of message.entities ?? message.caption_entities ?? []) {
    if (entity.type === "text_mention" && entity.user?.id === botId) return true;
    const word = text.slice(entity.offset, entity.offset + entity.length).toLowerCase();
    if (entity.type === "mention" && username !== undefined && word === `@${username}`) return true;
    if (entity.type === "bot_command" && (!word.includes("@") || word.endsWith(`@${username}`))) return true;
  }
  return false;
}
