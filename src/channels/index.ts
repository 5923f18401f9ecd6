import { Hono } from "hono";
import type { RouteDeps } from "../gateway/types.js";
import type { ChannelName, ChannelsConfig } from "./config.js";
import type { RetryOptions } from "./deliver.js";
import { discordChannel } from "./discord.js";
import { ChannelDispatcher } from "./dispatcher.js";
import { matrixChannel } from "./matrix.js";
import { teamsChannel } from "./msteams.js";
import { slackChannel } from "./slack.js";
import { ChannelStatus } from "./status.js";
import { type Supervised, type SuperviseOptions, supervise } from "./supervise.js";
import { telegramChannel } from "./telegram.js";
import type { ChannelAdapter, ChannelHost } from "./types.js";
import { whatsappChannel } from "./whatsapp.js";

export type { ChannelsConfig } from "./config.js";
export type { ChannelState, ChannelStateReport } from "./status.js";
export { ChannelStatus } from "./status.js";
export type { ChannelAdapter, ChannelHost, Inbound } from "./types.js";

export interface ChannelOptions {
  /** Where `…_env` secrets are read; default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Delivery retries (tests record the waits instead of sleeping). */
  retry?: RetryOptions;
  /** Turns running or waiting for delivery at once; default 256. */
  maxPending?: number;
  /** How a channel whose platform cannot be reached is started again (tests record the waits). */
  restart?: SuperviseOptions;
  /** How long `start()` waits for a channel's first try before it says "still connecting"; default 15 s. */
  startTimeoutMs?: number;
}

/** The enabled channels, attached to a gateway: webhook routes to mount, connections to start, a close. */
export interface AttachedChannels {
  /** `/channels/<name>/…`; each checks its platform's signature, so it goes before the gateway's token check. */
  app: Hono;
  /**
   * Starts long polling and gateway connections. Never throws for a platform that cannot be reached: that
   * channel is retried in the background, and the returned lines (one per such channel) say so.
   */
  start(): Promise<string[]>;
  /** Resolves when every turn taken so far has been answered (or its failure recorded). */
  idle(): Promise<void>;
  /** Stops taking messages, then waits for the turns already taken to be answered. */
  close(): Promise<void>;
}

export interface Channels {
  readonly adapters: readonly ChannelAdapter[];
  /** Each enabled channel's connection state, for `/health` and `/metrics`. */
  readonly status: ChannelStatus;
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
  const status = new ChannelStatus();
  // Webhook-only channels are up as soon as their routes are mounted; the others once `start` succeeded.
  for (const adapter of adapters) if (!adapter.start) status.set(adapter.name, "up");
  return {
    adapters,
    status,
    describe: (url) => adapters.map((a) => a.describe(url)),
    attach: (gatewayHost) => {
      const host: ChannelHost = { ...gatewayHost, status };
      const dispatcher = new ChannelDispatcher(host, options.maxPending);
      const app = new Hono();
      const receives = new Map(adapters.map((a) => [a, dispatcher.receiver(answerAll.get(a.name) ?? false)]));
      for (const [adapter, receive] of receives) {
        if (adapter.routes) app.route(`/channels/${adapter.name}`, adapter.routes(receive, host));
      }
      const stop = new AbortController();
      const supervised: Supervised[] = [];
      return {
        app,
        start: async () => {
          const lines = [...receives].flatMap(([adapter, receive]) => {
            const start = adapter.start;
            if (!start) return [];
            const run = () => start.call(adapter, receive, host);
            const one = supervise(adapter.name, run, status, host.logger, stop.signal, options.restart);
            supervised.push(one);
            return [firstTry(adapter.name, one, options.startTimeoutMs ?? 15_000)];
          });
          return (await Promise.all(lines)).filter((line): line is string => line !== undefined);
        },
        idle: () => dispatcher.drain(),
        close: async () => {
          stop.abort();
          await Promise.all(supervised.map((s) => s.done));
          await Promise.all(adapters.map((a) => a.close?.()));
          await dispatcher.drain();
          await dispatcher.close();
        },
      };
    },
  };
}

/** The first try's line, or "still connecting" when it has not settled within `ms`. */
async function firstTry(channel: string, one: Supervised, ms: number): Promise<string | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<string>((resolve) => {
    timer = setTimeout(
      () => resolve(`channel ${channel} is still connecting; it starts in the background`),
      ms,
    );
  });
  try {
    return await Promise.race([one.first, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** The host a gateway gives its channels: its engine, its runtimes' turns, its logger and body limit. */
export function channelHost(deps: RouteDeps): ChannelHost {
  return {
    engine: deps.engine,
    startTurn: (envelope) => deps.engine.start(envelope, { signal: deps.shutdownSignal }),
    logger: deps.logger,
    bodyLimit: deps.bodyLimit,
  };
}
