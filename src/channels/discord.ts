import { createPublicKey, verify } from "node:crypto";
import { Hono } from "hono";
import { SessiondError } from "../model/errors.js";
import type { ChannelsConfig } from "./config.js";
import { secretOf } from "./config.js";
import { callPlatform, type RetryOptions } from "./deliver.js";
import { type DiscordGateway, type DiscordMessage, openDiscordGateway } from "./discord-gateway.js";
import { ed25519KeyProblem } from "./ed25519-key.js";
import { chunks, parseObject, rawBody, unauthorized } from "./http.js";
import { readSecret } from "./secrets.js";
import type { ChannelAdapter, Inbound } from "./types.js";

type DiscordSettings = NonNullable<ChannelsConfig["discord"]>;

interface DiscordUser {
  id: string;
  username?: string;
  global_name?: string | null;
}
interface Interaction {
  id: string;
  application_id: string;
  type: number;
  token: string;
  guild_id?: string;
  channel_id?: string;
  member?: { user: DiscordUser };
  user?: DiscordUser;
  data?: { name: string; options?: Array<{ name: string; value?: unknown }> };
}

/** Discord caps a message at 2,000 characters. */
const MAX_TEXT = 2000;
const PING = 1;
const APPLICATION_COMMAND = 2;
/** "Thinking…": the answer follows as a follow-up message. */
const DEFERRED_CHANNEL_MESSAGE = 5;
/** The DER header of an Ed25519 public key, before its 32 raw bytes. */
/** An interaction signed longer ago than this (or that far ahead) is refused as a replay. */
const MAX_SKEW_SECONDS = 5 * 60;

const ED25519_SPKI = Buffer.from("302a300506032b6570032100", "hex");

/**
 * Discord: the interactions endpoint (slash commands, signed with the application's Ed25519 key;
 * answered at once as deferred, then by a follow-up) and, with `gateway: true`, messages from the
 * Gateway (`MESSAGE_CREATE`, through `@discordjs/ws`), answered with REST create message in their
 * channel (a thread is its own channel).
 */
export function discordChannel(
  settings: DiscordSettings,
  env: NodeJS.ProcessEnv,
  retry: RetryOptions = {},
  now: () => number = Date.now,
): ChannelAdapter {
  const base = (settings.api_base_url ?? "https://discord.com/api").replace(/\/$/, "");
  const api = `${base}/v10`;
  if (settings.public_key) {
    const problem = ed25519KeyProblem(Buffer.from(settings.public_key, "hex"));
    if (problem) {
      throw new SessiondError(
        "CONFIG_INVALID",
        `channels.discord.public_key: not a usable Ed25519 key: ${problem}`,
      );
    }
  }
  const publicKey = settings.public_key
    ? createPublicKey({
        key: Buffer.concat([ED25519_SPKI, Buffer.from(settings.public_key, "hex")]),
        format: "der",
        type: "spki",
      })
    : undefined;
  const token = settings.gateway ? readSecret(secretOf(settings, "token"), "discord.token", env) : undefined;
  if (!publicKey && !token) {
    throw new SessiondError(
      "CONFIG_INVALID",
      "channels.discord: set public_key (interactions) or gateway: true",
    );
  }
  let gateway: DiscordGateway | undefined;

  const interaction = (payload: Interaction): Inbound | undefined => {
    const user = payload.member?.user ?? payload.user;
    if (payload.type !== APPLICATION_COMMAND || !user || !payload.channel_id || !payload.data)
      return undefined;
    const words = (payload.data.options ?? []).map((o) => o.value).filter((v) => typeof v === "string");
    const guild = payload.guild_id !== undefined;
    return {
      envelope: {
        channel: "discord",
        ...(settings.agent ? { agent: settings.agent } : {}),
        account: payload.application_id,
        chat: { type: guild ? "group" : "direct", id: payload.channel_id },
        sender: senderOf(user),
        text: words.length > 0 ? words.join(" ") : `/${payload.data.name}`,
        platformMessageId: payload.id,
      },
      // A slash command is always meant for the bot.
      addressed: true,
      reply: async (text) => {
        for (const piece of chunks(text, MAX_TEXT)) {
          await callPlatform(
            {
              what: "discord follow-up",
              url: `${api}/webhooks/${payload.application_id}/${payload.token}`,
              body: { content: piece },
            },
            retry,
          );
        }
      },
    };
  };

  const message = (m: DiscordMessage, botId: string): Inbound | undefined => {
    if (m.author.bot || m.author.id === botId || !m.content) return undefined;
    const guild = m.guild_id !== undefined;
    return {
      envelope: {
        channel: "discord",
        ...(settings.agent ? { agent: settings.agent } : {}),
        account: botId,
        chat: { type: guild ? "group" : "direct", id: m.channel_id },
        sender: senderOf(m.author),
        text: m.content,
        platformMessageId: m.id,
      },
      addressed:
        !guild || m.mentions.some((u) => u.id === botId) || m.referenced_message?.author?.id === botId,
      reply: async (text) => {
        for (const piece of chunks(text, MAX_TEXT)) {
          await callPlatform(
            {
              what: "discord create message",
              url: `${api}/channels/${m.channel_id}/messages`,
              headers: { authorization: `Bot ${token}` },
              body: { content: piece, message_reference: { message_id: m.id, fail_if_not_exists: false } },
            },
            retry,
          );
        }
      },
    };
  };

  return {
    name: "discord",
    ...(publicKey
      ? {
          routes: (receive, host) =>
            new Hono().post("/interactions", async (c) => {
              const body = await rawBody(c, host.bodyLimit);
              const signature = c.req.header("x-signature-ed25519") ?? "";
              const timestamp = c.req.header("x-signature-timestamp") ?? "";
              const valid =
                /^[0-9a-f]{128}$/i.test(signature) &&
                verify(null, Buffer.from(timestamp + body), publicKey, Buffer.from(signature, "hex"));
              if (!valid) throw unauthorized("missing or invalid X-Signature-Ed25519");
              // Signed, but not lately: a replay (the same 5-minute window as Slack's).
              const seconds = Number(timestamp);
              if (!Number.isInteger(seconds) || Math.abs(now() / 1000 - seconds) > MAX_SKEW_SECONDS) {
                throw unauthorized("X-Signature-Timestamp is more than five minutes away from now");
              }
              const payload = parseObject(body) as unknown as Interaction;
              if (payload.type === PING) return c.json({ type: PING });
              const inbound = interaction(payload);
              if (!inbound)
                return c.json(
                  { error: { code: "INVALID_ARGUMENT", message: "unsupported interaction" } },
                  400,
                );
              await receive(inbound);
              return c.json({ type: DEFERRED_CHANNEL_MESSAGE });
            }),
        }
      : {}),
    ...(token
      ? {
          start: async (receive, host) => {
            gateway = await openDiscordGateway({
              token,
              api,
              retry,
              ...(settings.gateway_url ? { gatewayUrl: settings.gateway_url } : {}),
              onMessage: async (m, botId) => {
                const inbound = message(m, botId);
                if (!inbound) return;
                await receive(inbound).catch((error: unknown) =>
                  host.logger.warn(
                    { channel: "discord", err: (error as Error).message },
                    "message not taken",
                  ),
                );
              },
            });
          },
          close: async () => {
            await gateway?.close();
          },
        }
      : {}),
    describe: (gatewayUrl) =>
      [
        publicKey ? `discord: interactions endpoint ${gatewayUrl}/channels/discord/interactions` : "",
        token ? "discord: Gateway (MESSAGE_CREATE)" : "",
      ]
        .filter(Boolean)
        .join("; "),
  };
}

function senderOf(user: DiscordUser) {
  const name = user.global_name ?? user.username;
  return { id: user.id, ...(name ? { name } : {}) };
}
