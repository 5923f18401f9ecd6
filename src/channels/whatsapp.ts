import { createHmac } from "node:crypto";
import { Hono } from "hono";
import type { ChannelsConfig } from "./config.js";
import { secretOf } from "./config.js";
import { callPlatform, type RetryOptions } from "./deliver.js";
import { chunks, parseObject, rawBody, sameSecret, unauthorized } from "./http.js";
import { readSecret } from "./secrets.js";
import type { ChannelAdapter } from "./types.js";

type WhatsAppSettings = NonNullable<ChannelsConfig["whatsapp"]>;

interface WaMessage {
  from: string;
  id: string;
  type: string;
  text?: { body: string };
}
interface WaChange {
  field: string;
  value: {
    metadata?: { phone_number_id: string };
    contacts?: Array<{ wa_id: string; profile?: { name?: string } }>;
    messages?: WaMessage[];
  };
}
interface WaPayload {
  object?: string;
  entry?: Array<{ changes?: WaChange[] }>;
}

/** WhatsApp caps a text message's body at 4,096 characters. */
const MAX_TEXT = 4096;

/**
 * The WhatsApp Cloud API: the webhook's `hub.challenge` handshake (against the verify token), `messages`
 * notifications signed with `X-Hub-Signature-256` (HMAC-SHA256 of the body with the app secret),
 * replies through the Graph API's `messages`, quoting the message answered. Cloud API chats are 1:1.
 */
export function whatsappChannel(
  settings: WhatsAppSettings,
  env: NodeJS.ProcessEnv,
  retry: RetryOptions = {},
): ChannelAdapter {
  const token = readSecret(secretOf(settings, "token"), "whatsapp.token", env);
  const appSecret = readSecret(secretOf(settings, "app_secret"), "whatsapp.app_secret", env);
  const verifyToken = readSecret(secretOf(settings, "verify_token"), "whatsapp.verify_token", env);
  const graph = `${(settings.api_base_url ?? "https://graph.facebook.com").replace(/\/$/, "")}/${settings.api_version ?? "v21.0"}`;

  return {
    name: "whatsapp",
    routes: (receive, host) =>
      new Hono()
        .get("/", (c) => {
          if (
            c.req.query("hub.mode") !== "subscribe" ||
            !sameSecret(c.req.query("hub.verify_token"), verifyToken)
          ) {
            return c.json({ error: { code: "FORBIDDEN", message: "wrong hub.verify_token" } }, 403);
          }
          return c.text(c.req.query("hub.challenge") ?? "");
        })
        .post("/", async (c) => {
          const body = await rawBody(c, host.bodyLimit);
          const expected = `sha256=${createHmac("sha256", appSecret).update(body).digest("hex")}`;
          if (!sameSecret(c.req.header("x-hub-signature-256"), expected)) {
            throw unauthorized("missing or wrong X-Hub-Signature-256");
          }
          const payload = parseObject(body) as WaPayload;
          for (const change of (payload.entry ?? []).flatMap((e) => e.changes ?? [])) {
            const { metadata, contacts = [], messages = [] } = change.value ?? {};
            if (change.field !== "messages" || !metadata) continue;
            for (const message of messages) {
              // Statuses, reactions and media without a caption carry no text to answer.
              if (message.type !== "text" || !message.text) continue;
              const name = contacts.find((c) => c.wa_id === message.from)?.profile?.name;
              await receive({
                envelope: {
                  channel: "whatsapp",
                  ...(settings.agent ? { agent: settings.agent } : {}),
                  account: metadata.phone_number_id,
                  chat: { type: "direct", id: message.from },
                  sender: { id: message.from, ...(name ? { name } : {}) },
                  text: message.text.body,
                  platformMessageId: message.id,
                },
                addressed: true,
                reply: async (text) => {
                  for (const piece of chunks(text, MAX_TEXT)) {
                    await callPlatform(
                      {
                        what: "whatsapp messages",
                        url: `${graph}/${metadata.phone_number_id}/messages`,
                        headers: { authorization: `Bearer ${token}` },
                        body: {
                          messaging_product: "whatsapp",
                          recipient_type: "individual",
                          to: message.from,
                          type: "text",
                          text: { body: piece },
                          context: { message_id: message.id },
                        },
                      },
                      retry,
                    );
                  }
                },
              });
            }
          }
          return c.json({ ok: true });
        }),
    describe: (gatewayUrl) => `whatsapp: webhook ${gatewayUrl}/channels/whatsapp`,
  };
}
