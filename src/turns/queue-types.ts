import type { Envelope } from "../model/envelope.js";
import type { QueueMode } from "../model/queue.js";
import type { Fence } from "../store/fence.js";
import type { Store } from "../store/store.js";
import type { ActorItem } from "./session-actor.js";

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

/** Where a running turn's steer inputs come from (its key's FIFO); `accept` says which may steer. */
export interface SteerSource {
  /** Whether the next waiting input is a steer this turn may take. */
  pending(accept: (envelope: Envelope) => boolean): boolean;
  /** Takes the waiting steer inputs from the head of the FIFO, oldest first, while `accept` says yes. */
  take(accept: (envelope: Envelope) => boolean): ActorItem[];
  /** Resolves true once `pending` would (at once if it does), false when `signal` aborts first. */
  wait(accept: (envelope: Envelope) => boolean, signal: AbortSignal): Promise<boolean>;
}

/** Leases per key shared by every process on one database (the PostgreSQL store's). */
export interface KeyLeases {
  /** Waits until this process holds the key's lease. */
  acquire(key: string): Promise<Fence>;
  release(fence: Fence): Promise<void>;
}

export interface LeasingStore {
  readonly leases: KeyLeases;
}

export function hasLeases(store: Store): store is Store & LeasingStore {
  return typeof (store as Partial<LeasingStore>).leases?.acquire === "function";
}
