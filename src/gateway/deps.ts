import type { ModelChoice } from "../config/effective-model.js";
import type { Engine } from "../engine.js";
import type { Runtime } from "../model/runtime.js";
import type { StoreFallback } from "./store-fallback.js";

/** A logger the gateway writes JSON lines to (pino in production; anything with these methods in tests). */
export interface GatewayLogger {
  info(fields: Record<string, unknown>, message?: string): void;
  warn(fields: Record<string, unknown>, message?: string): void;
  error(fields: Record<string, unknown>, message?: string): void;
}

/** What every part of the gateway (HTTP routes, the WebSocket protocol) is built from. */
export interface GatewayDeps {
  engine: Engine;
  /**
   * The runtime that answers for an agent: its configured model, else the offline echo. `session` is a
   * session's own `model` / `provider` overrides, used in place of the agent's model.
   */
  runtimeFor(agent: string, session?: ModelChoice): Runtime;
  /** The access token; compared in constant time. */
  token: string;
  /** Senders (ids) who are human admins: only their conversations get the admin tools. */
  admins: readonly string[];
  logger: GatewayLogger;
  /** Set when the configured store could not be opened and the gateway runs on the memory store. */
  storeFallback?: StoreFallback;
}
