import type { Engine } from "../engine.js";
import type { StoreFallback } from "./store-fallback.js";

/** A logger the gateway writes JSON lines to (pino in production; anything with these methods in tests). */
export interface GatewayLogger {
  info(fields: Record<string, unknown>, message?: string): void;
  warn(fields: Record<string, unknown>, message?: string): void;
  error(fields: Record<string, unknown>, message?: string): void;
}

/** One chat platform channel's connection state, as `/health` and `/metrics` show it. */
export interface ChannelStateView {
  channel: string;
  state: "starting" | "up" | "retrying" | "stopped";
  since: string;
  error?: string;
  failures: number;
}

/** What every part of the gateway (HTTP routes, the WebSocket protocol) is built from. */
export interface GatewayDeps {
  /** Runs every turn (on each agent's runtime) and holds the data. */
  engine: Engine;
  /** The access token; compared in constant time. */
  token: string;
  logger: GatewayLogger;
  /** Set when the configured store could not be opened and the gateway runs on the memory store. */
  storeFallback?: StoreFallback;
  /** The chat platform channels' states, when channels are attached. */
  channelStates?: { list(): ChannelStateView[] };
}
