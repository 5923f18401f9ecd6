import { Hono } from "hono";
import { runTurn } from "../gateway/turn.js";
import type { RouteDeps } from "../gateway/types.js";
import type { ChannelName, ChannelsConfig } from "./config.js";
import type { RetryOptions } from "./deliver.js";
import { discordChannel } from "./discord.js";
import { ChannelDispatcher } from "./dispatcher.js";
import { matrixChannel } from "./matrix.js";
import { teamsChannel } from "./msteams.js";
import { slackChannel } from "./slack.js";
import { telegramChannel } from "./telegram.js";
import type { ChannelAdapter, ChannelHost } from "./types.js";
import { whatsappChannel } from "./whatsapp.js";

export type { ChannelsConfig } from "./config.js";
export type { ChannelAdapter, ChannelHost, Inbound } from "./types.js";

export interface ChannelOptions {
  /** Where `…_env` secrets are read; default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Delivery retries (tests record the waits instead of sleeping). */
  retry?: RetryOptions;
  /** Turns running or waiting for delivery at once; default 256. */
  maxPending?: number;
}

/** The enabled channels, attached to a gateway: webhook routes to mount, connections to start, a close. */
export interface AttachedChannels {
  /** `/channels/<name>/…`; each checks its platform's signature, so it goes before the gateway's token check. */
  app: Hono;
  /** Starts long polling and gateway connections; resolves once each is connected. */
  start(): Promise<void>;
  /** Resolves when every turn taken so far has been answered (or its failure recorded). */
  idle(): Promise<void>;
  /** Stops taking messages, then waits for the turns already taken to be answered. */
  close(): Promise<void>;
}

export interface Channels {
  readonly adapters: readonly ChannelAdapter[];
  attach(host: ChannelHost): AttachedChannels;
  /** One line per enabled channel for `sessiond serve`: its webhook URL or how it connects. */
  describe(gatewayUrl: string): string[];
}

type Factory = (settings: never, env: NodeJS.ProcessEnv, retry: RetryOptions) => ChannelAdapter;

const FACTORIES: Partial<Record<ChannelName, Factory>> = {
  telegram: telegramChannel,
  slack: slackChannel,
  discord: discordChannel,
  msteams: teamsChannel,
  whatsapp: whatsappChannel,
  matrix: matrixChannel,
};

/** Builds the adapters of every configured channel (not `enabled: false`); a missing secret is CONFIG_INVALID. */
export function createChannels(config: ChannelsConfig, options: ChannelOptions = {}): Channels {
  const env = options.env ?? process.env;
  const adapters: ChannelAdapter[] = [];
  const answerAll = new Map<string, boolean>();
  for (const [name, settings] of Object.entries(config) as Array<
    [ChannelName, { enabled?: boolean; answer?: string } | undefined]
  >) {
    if (settings === undefined || settings.enabled === false) continue;
    const factory = FACTORIES[name];
    if (!factory) continue;
    const adapter = factory(settings as never, env, options.retry ?? {});
    adapters.push(adapter);
    answerAll.set(adapter.name, settings.answer === "all");
  }
  return {
    adapters,
    describe: (url) => adapters.map((a) => a.describe(url)),
    attach: (host) => {
      const dispatcher = new ChannelDispatcher(host, options.maxPending);
      const app = new Hono();
      const receives = new Map(adapters.map((a) => [a, dispatcher.receiver(answerAll.get(a.name) ?? false)]));
      for (const [adapter, receive] of receives) {
        if (adapter.routes) app.route(`/channels/${adapter.name}`, adapter.routes(receive, host));
      }
      return {
        app,
        start: async () => {
          for (const [adapter, receive] of receives) await adapter.start?.(receive, host);
        },
        idle: () => dispatcher.drain(),
        close: async () => {
          await Promise.all(adapters.map((a) => a.close?.()));
          await dispatcher.drain();
        },
      };
    },
  };
}

/** The host a gateway gives its channels: its engine, its runtimes' turns, its logger and body limit. */
export function channelHost(deps: RouteDeps): ChannelHost {
  return {
    engine: deps.engine,
    runTurn: (envelope) => runTurn(deps, envelope),
    logger: deps.logger,
    bodyLimit: deps.bodyLimit,
  };
}
