import type { Route } from "../keys/index.js";
import type { OneShotTimer } from "../lifecycle/clock.js";
import type { Envelope } from "../model/envelope.js";
import type { QueueMode, QueueSettings } from "../model/queue.js";
import type { TurnResult, TurnRunner } from "./turn.js";

/** An input waiting for its session's turn, as `GET /api/inspect` shows it. */
export interface QueuedInput {
  id: string;
  key: string;
  agent: string;
  /** The first 80 characters of the message. */
  preview: string;
  mode: QueueMode;
  admittedAt: number;
}

/** One turn the queue hands to the engine: `context` inputs are stored first, then `input` runs. */
export interface Batch {
  route: Route;
  /** Earlier inputs coalesced into this turn (collect, interrupt), stored as their own user entries. */
  context: Envelope[];
  /** One line standing for inputs dropped by `summarize` since the last turn, stored before them. */
  summary?: string;
  input: Envelope;
  /** The ids of the batch's inputs, `context` first and `input` last. */
  ids: string[];
  run: TurnRunner;
  signal: AbortSignal;
  /** The inputs waiting in mode `steer` that this running turn may take at a tool boundary. */
  steering: BatchSteering;
}

/** An input a running turn took from the queue (mode `steer`): its caller gets that turn's result. */
export interface SteerInput {
  id: string;
  envelope: Envelope;
}

export interface BatchSteering {
  /** Whether the next waiting input is a steer this turn may take (`accept`ed). */
  pending(accept: (envelope: Envelope) => boolean): boolean;
  /** Takes the waiting steer inputs from the head of the queue, oldest first, while `accept` says yes. */
  take(accept: (envelope: Envelope) => boolean): SteerInput[];
  /** Resolves true once `pending` would (at once if it does), false when `signal` aborts first. */
  wait(accept: (envelope: Envelope) => boolean, signal: AbortSignal): Promise<boolean>;
}

export interface TurnQueueDeps {
  timer: OneShotTimer;
  now(): number;
  /** The key's queue settings (session overrides > agent > defaults), read as each input arrives. */
  settings(route: Route): Promise<QueueSettings>;
  /** Runs one batch as one turn, in the key's lane. */
  execute(batch: Batch): Promise<TurnResult>;
  /** Records that inputs were dropped (policy `old`), on the key's session; must not throw. */
  dropped(route: Route, texts: string[]): Promise<void>;
}
