import { Hono } from "hono";
import { createRemoteJWKSet, type JWTVerifyGetKey, jwtVerify } from "jose";
import type { ChatType } from "../model/envelope.js";
import type { ChannelsConfig } from "./config.js";
import { secretOf } from "./config.js";
import { callPlatform, type RetryOptions } from "./deliver.js";
import { parseObject, rawBody, unauthorized } from "./http.js";
import { readSecret } from "./secrets.js";
import type { ChannelAdapter, ChannelHost } from "./types.js";

type TeamsSettings = NonNullable<ChannelsConfig["msteams"]>;

interface Account {
  id: string;
  name?: string;
}
interface Activity {
  type: string;
  id: string;
  serviceUrl: string;
  from: Account;
  recipient: Account;
  conversation: { id: string; conversationType?: "personal" | "groupChat" | "channel" };
  text?: string;
  entities?: Array<{ type: string; mentioned?: Account }>;
}

const OPENID = "https://login.botframework.com/v1/.well-known/openidconfiguration";
const TOKEN_URL = "https://login.microsoftonline.com/botframework.com/oauth2/v2.0/token";
const ISSUER = "https://api.botframework.com";

/**
 * Microsoft Teams through the Bot Framework: an `Activity` whose bearer JWT is checked against the Bot
 * Framework's OpenID keys (issuer, audience = the app id, its `serviceurl` claim = the activity's);
 * replies to the activity in its conversation with an app token from client credentials.
 */
export function teamsChannel(
  settings: TeamsSettings,
  env: NodeJS.ProcessEnv,
  retry: RetryOptions = {},
): ChannelAdapter {
  const password = readSecret(secretOf(settings, "app_password"), "msteams.app_password", env);
  let keys: Promise<JWTVerifyGetKey> | undefined;
  let appToken: { value: string; until: number } | undefined;

  const keySet = (): Promise<JWTVerifyGetKey> => {
    keys ??= callPlatform(
      { what: "bot framework openid configuration", method: "GET", url: settings.openid_url ?? OPENID },
      retry,
    ).then((config) => createRemoteJWKSet(new URL((config as { jwks_uri: string }).jwks_uri)));
    // A failed fetch is tried again by the next request.
    keys.catch(() => {
      keys = undefined;
    });
    return keys;
  };

  const verify = async (authorization: string | undefined): Promise<Record<string, unknown>> => {
    const jwt = /^Bearer\s+(\S+)$/i.exec(authorization ?? "")?.[1];
    if (!jwt) throw unauthorized("missing Bot Framework bearer token");
    let claims: Record<string, unknown>;
    try {
      ({ payload: claims } = await jwtVerify(jwt, await keySet(), {
        issuer: ISSUER,
        audience: settings.app_id,
        // As the Bot Framework SDK: a token must expire, and name the serviceUrl its activity may send to.
        requiredClaims: ["exp", "serviceurl"],
        clockTolerance: 300,
      }));
    } catch {
      throw unauthorized("the Bot Framework token does not verify");
    }
    return claims;
  };

  const token = async (): Promise<string> => {
    if (appToken && appToken.until > Date.now()) return appToken.value;
    const answer = (await callPlatform(
      {
        what: "bot framework token",
        url: settings.token_url ?? TOKEN_URL,
        body: new URLSearchParams({
          grant_type: "client_credentials",
          client_id: settings.app_id,
          client_secret: password,
          scope: "https://api.botframework.com/.default",
        }),
      },
      retry,
    )) as { access_token: string; expires_in?: number };
    appToken = { value: answer.access_token, until: Date.now() + ((answer.expires_in ?? 3600) - 60) * 1000 };
    return appToken.value;
  };

  const routes = (receive: Parameters<NonNullable<ChannelAdapter["routes"]>>[0], host: ChannelHost) =>
    new Hono().post("/messages", async (c) => {
      const claims = await verify(c.req.header("authorization"));
      const activity = parseObject(await rawBody(c, host.bodyLimit)) as unknown as Activity;
      // The reply carries the app's token to the activity's serviceUrl: only to the one the token names.
      if (typeof claims.serviceurl !== "string" || claims.serviceurl !== activity.serviceUrl) {
        throw unauthorized("the token's serviceurl is not the activity's");
      }
      if (activity.type !== "message" || activity.text === undefined) return c.body(null, 202);
      const kind = activity.conversation.conversationType ?? "personal";
      const type: ChatType = kind === "personal" ? "direct" : kind === "channel" ? "channel" : "group";
      const service = activity.serviceUrl.replace(/\/$/, "");
      const conversation = encodeURIComponent(activity.conversation.id);
      await receive({
        envelope: {
          channel: "msteams",
          ...(settings.agent ? { agent: settings.agent } : {}),
          account: activity.recipient.id,
          chat: { type, id: activity.conversation.id },
          sender: { id: activity.from.id, ...(activity.from.name ? { name: activity.from.name } : {}) },
          text: activity.text,
          platformMessageId: activity.id,
        },
        addressed:
          type === "direct" ||
          (activity.entities ?? []).some(
            (e) => e.type === "mention" && e.mentioned?.id === activity.recipient.id,
          ),
        reply: async (text) => {
          await callPlatform(
            {
              what: "bot framework reply",
              url: `${service}/v3/conversations/${conversation}/activities/${encodeURIComponent(activity.id)}`,
              headers: { authorization: `Bearer ${await token()}` },
              body: {
                type: "message",
                text,
                replyToId: activity.id,
                from: activity.recipient,
                conversation: activity.conversation,
              },
            },
            retry,
          );
        },
      });
      return c.body(null, 202);
    });

  return {
    name: "msteams",
    routes,
    describe: (gatewayUrl) =>
      `msteams: Bot Framework messaging endpoint ${gatewayUrl}/channels/msteams/messages`,
  };
}
