import { isAbsolute, resolve } from "node:path";
import type * as Zod from "zod";
import type { z } from "zod";
import type { SecretSource } from "./secrets.js";

/** The schema of `channels:`, built with the zod the config loader loads (on first use). */
export function buildChannelsSchema(z: typeof Zod.z) {
  const name = z.string().min(1);
  const url = z.string().url();

  /** `<what>_env` / `<what>_file`: where a secret is read from. The secret itself never goes in the file. */
  const secret = <W extends string>(what: W) => {
    return { [`${what}_env`]: name.optional(), [`${what}_file`]: name.optional() } as Record<
      `${W}_env` | `${W}_file`,
      z.ZodOptional<z.ZodString>
    >;
  };

  /** What every channel has: on or off, the agent it routes to, whom it answers in groups, its API's base URL. */
  const common = {
    enabled: z.boolean().optional(),
    agent: name.optional(),
    /** mentions (default): in groups only messages that mention the bot or reply to it run a turn. */
    answer: z.enum(["mentions", "all"]).optional(),
    api_base_url: url.optional(),
  };

  return z.strictObject({
    telegram: z
      .strictObject({
        ...common,
        ...secret("token"),
        ...secret("secret"),
        mode: z.enum(["webhook", "polling"]).optional(),
        /** The bot's @username for mention detection; default what getMe says. */
        username: name.optional(),
        poll_timeout_seconds: z.number().int().min(0).max(50).optional(),
      })
      .optional(),
    slack: z
      .strictObject({
        ...common,
        ...secret("token"),
        ...secret("signing_secret"),
        /** The bot's user id (U…) for mention detection; default the event's authorizations. */
        bot_user_id: name.optional(),
      })
      .optional(),
    discord: z
      .strictObject({
        ...common,
        ...secret("token"),
        /** The application's Ed25519 public key (hex) that signs interactions. */
        public_key: z
          .string()
          .regex(/^[0-9a-fA-F]{64}$/)
          .optional(),
        application_id: name.optional(),
        /** Also take messages from the Gateway (MESSAGE_CREATE) with `@discordjs/ws`. */
        gateway: z.boolean().optional(),
        gateway_url: url.optional(),
      })
      .optional(),
    msteams: z
      .strictObject({
        ...common,
        /** The bot's Microsoft App id: the audience of the Bot Framework's tokens. */
        app_id: name,
        ...secret("app_password"),
        openid_url: url.optional(),
        token_url: url.optional(),
      })
      .optional(),
    whatsapp: z
      .strictObject({
        ...common,
        ...secret("token"),
        ...secret("app_secret"),
        ...secret("verify_token"),
        api_version: z
          .string()
          .regex(/^v\d+\.\d+$/)
          .optional(),
      })
      .optional(),
    matrix: z
      .strictObject({
        ...common,
        ...secret("hs_token"),
        ...secret("as_token"),
        /** The bot's Matrix user id, `@bot:example.org`. */
        user_id: z.string().regex(/^@[^:]+:.+$/),
        homeserver_url: url,
      })
      .optional(),
  });
}

/** `channels:` in sessiond.yaml, as written there (file paths resolved against the config's folder). */
export type ChannelsConfig = z.infer<ReturnType<typeof buildChannelsSchema>>;
export type ChannelName = keyof ChannelsConfig;
export type ChannelCommon = {
  enabled?: boolean;
  agent?: string;
  answer?: "mentions" | "all";
  api_base_url?: string;
};

/** The secret `<what>` of a channel's settings as a source: its `_env` or its `_file`. */
export function secretOf(settings: object, what: string): SecretSource {
  const s = settings as Record<string, string | undefined>;
  const env = s[`${what}_env`];
  const file = s[`${what}_file`];
  return { ...(env ? { env } : {}), ...(file ? { file } : {}) };
}

/** Makes every `…_file` path absolute, relative to the config file's folder. */
export function resolveChannelFiles(channels: ChannelsConfig, baseDir: string): ChannelsConfig {
  const out: Record<string, unknown> = {};
  for (const [channel, settings] of Object.entries(channels)) {
    if (settings === undefined) continue;
    out[channel] = Object.fromEntries(
      Object.entries(settings).map(([k, v]) => [
        k,
        k.endsWith("_file") && typeof v === "string" && !isAbsolute(v) ? resolve(baseDir, v) : v,
      ]),
    );
  }
  return out as ChannelsConfig;
}
