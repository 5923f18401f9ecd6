import { optionalPackage } from "../model/optional-package.js";
import { callPlatform, type RetryOptions } from "./deliver.js";

/** The fields of a Gateway `MESSAGE_CREATE` the adapter reads. */
export interface DiscordMessage {
  id: string;
  channel_id: string;
  guild_id?: string;
  author: { id: string; username?: string; global_name?: string | null; bot?: boolean };
  content: string;
  mentions: Array<{ id: string }>;
  referenced_message?: { author?: { id: string } } | null;
}

export interface DiscordGateway {
  close(): Promise<void>;
}

export interface GatewayOptions {
  token: string;
  /** `<base>/v10`: where `GET /gateway/bot` tells which Gateway URL to connect to. */
  api: string;
  /** Overrides the URL `/gateway/bot` answers with. */
  gatewayUrl?: string;
  retry: RetryOptions;
  onMessage(message: DiscordMessage, botId: string): Promise<void>;
}

/** Guild messages, direct messages and their content. */
const INTENTS = (1 << 9) | (1 << 12) | (1 << 15);

/**
 * Connects to Discord's Gateway with `@discordjs/ws` (an optional dependency, loaded here on first use)
 * and hands every `MESSAGE_CREATE` on; resolves once the session is READY.
 */
const loadDiscordWs = optionalPackage("@discordjs/ws", () => import("@discordjs/ws"));

export async function openDiscordGateway(options: GatewayOptions): Promise<DiscordGateway> {
  const ws = await loadDiscordWs();
  // The manager asks REST for /gateway/bot only; this answers it through the same client as every reply.
  const rest = {
    get: async (route: string) => {
      const info = (await callPlatform(
        {
          what: "discord gateway/bot",
          method: "GET",
          url: `${options.api}${route}`,
          headers: { authorization: `Bot ${options.token}` },
        },
        options.retry,
      )) as { url: string };
      return options.gatewayUrl ? { ...info, url: options.gatewayUrl } : info;
    },
  };
  const manager = new ws.WebSocketManager({
    token: options.token,
    intents: INTENTS,
    rest: rest as unknown as ConstructorParameters<typeof ws.WebSocketManager>[0]["rest"],
  });
  let botId: string | undefined;
  const ready = new Promise<void>((resolve) => {
    manager.on(ws.WebSocketShardEvents.Ready, (data) => {
      botId = data.user.id;
      resolve();
    });
  });
  manager.on(ws.WebSocketShardEvents.Dispatch, (payload) => {
    if (payload.t !== "MESSAGE_CREATE" || botId === undefined) return;
    void options.onMessage(payload.d as unknown as DiscordMessage, botId);
  });
  await manager.connect();
  await ready;
  return {
    close: async () => {
      await manager.destroy();
    },
  };
}
