import type { Hono } from "hono";
import type { Engine } from "../engine.js";
import type { Envelope } from "../model/envelope.js";
import type { TurnResult } from "../turns/turn.js";
import type { ChannelStatus } from "./status.js";

/** Where channels write JSON log lines; fields never carry a token, a secret or a message's text. */
export interface ChannelLogger {
  info(fields: Record<string, unknown>, message?: string): void;
  warn(fields: Record<string, unknown>, message?: string): void;
  error(fields: Record<string, unknown>, message?: string): void;
}

/** What the channels run with: the engine, a turn on the routed agent's runtime, a logger. */
export interface ChannelHost {
  engine: Engine;
  /**
   * Starts a turn on the routed agent's runtime; resolves once its input is durable (admitted), so the
   * platform hears the message was taken only then. `result` is the turn's.
   */
  startTurn(envelope: Envelope): Promise<{ result: Promise<TurnResult> }>;
  logger: ChannelLogger;
  /** Largest webhook body in bytes. */
  bodyLimit: number;
  /** Where a channel with a connection of its own (long polling) says whether its platform answers. */
  status?: ChannelStatus;
}

/** An envelope as an adapter builds it: the bot account and the platform's message id are always known. */
export type ChannelEnvelope = Envelope & { account: string; platformMessageId: string };

/** One inbound message an adapter has verified and normalised. */
export interface Inbound {
  envelope: ChannelEnvelope;
  /** A direct chat, a mention of the bot or a reply to it: a turn runs. Otherwise it is stored as context. */
  addressed: boolean;
  /** Sends the reply where the message came from (its thread or topic); throws DeliveryError when it cannot. */
  reply(text: string): Promise<void>;
}

/** What `receive` did with an inbound message. */
export type Received = "turn" | "context" | "duplicate";

export type Receive = (inbound: Inbound) => Promise<Received>;

/** A platform adapter: verify → envelope → (turn) → deliver. Each platform's module builds one. */
export interface ChannelAdapter {
  /** The channel name, as in envelopes and keys: `telegram`, `slack`, … */
  readonly name: string;
  /** Webhook routes, mounted at `/channels/<name>`; they check the platform's signature themselves. */
  routes?(receive: Receive, host: ChannelHost): Hono;
  /**
   * Inbound connections of its own (long polling, a gateway WebSocket); resolves once connected, throws when
   * the platform cannot be reached (it is called again, with a backoff, until it can).
   */
  start?(receive: Receive, host: ChannelHost): Promise<void>;
  /** Stops what `start` began. */
  close?(): Promise<void>;
  /** One line for `sessiond serve`: how messages come in, given the gateway's URL. */
  describe(gatewayUrl: string): string;
}
