import type { Route } from "../keys/index.js";
import type { OneShotTimer } from "../lifecycle/clock.js";
import type { Envelope } from "../model/envelope.js";
import type { AdmitInput } from "../model/inbox.js";
import type { QueueMode, QueueSettings } from "../model/queue.js";
import type { InboxWrite } from "../store/driver.js";
import type { Fence } from "../store/fence.js";
import { capabilitiesOf, type Store } from "../store/store.js";
import type { SessionActor } from "./session-actor.js";
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
  /** Waits until this process holds the key's lease; `onWait` is called once if it has to wait for another's. */
  acquire(key: string, onWait?: () => void): Promise<Fence>;
  release(fence: Fence): Promise<void>;
}

export interface LeasingStore {
  readonly leases: KeyLeases;
}

export function hasLeases(store: Store): store is Store & LeasingStore {
  return capabilitiesOf(store).leases === true;
}

export type TurnOutcome = { result: TurnResult } | { error: unknown };

/** One input of a key: waiting in the actor's FIFO, then part of the batch its turn runs. */
export interface ActorItem {
  id: string;
  route: Route;
  envelope: Envelope;
  run: TurnRunner;
  signal: AbortSignal | undefined;
  settings: QueueSettings;
  admittedAt: number;
  /** The inbox row of an admitted input (none: a turn that is only tracked). */
  admission: ItemAdmission | undefined;
  /** Ends the item once: its caller, its status and its inbox row hear the outcome; later calls do nothing. */
  settle(outcome: TurnOutcome): void;
}

/** An admitted input's inbox write: `written` resolves (never rejects) once it ended, and says how. */
export interface ItemAdmission {
  written: Promise<void>;
  /** True once the row is durable; false when a redelivery found the one admitted before. */
  stored?: boolean;
  failed?: boolean;
  failure?: unknown;
  /** The item's end state was committed with its turn's reply: nothing is left to write. */
  ended?: boolean;
  /**
   * Not written yet: the admission commits with the input's user entry when its turn starts at once
   * (`AppendOptions.inbox`), or on its own if the turn takes other inputs too, or waits for its key's
   * lease (`writing`: that write). `settle` ends the wait.
   */
  deferred?: {
    input: AdmitInput;
    write: InboxWrite;
    settle(stored: boolean): void;
    writing?: Promise<void>;
  };
}

/** The turn an actor runs: `context` inputs are stored first, then `input` runs. */
export interface ActorBatch {
  route: Route;
  /** Every input of the turn, the input last; steer inputs the runtime took are added as it takes them. */
  items: ActorItem[];
  /** Earlier inputs coalesced into this turn (collect, interrupt), stored as their own user entries. */
  context: Envelope[];
  /** One line standing for inputs dropped by `summarize` since the last turn, stored before them. */
  summary?: string;
  input: Envelope;
  run: TurnRunner;
  /** The turn's own: aborted by its caller, a newer message (`interrupt`), an operator, or its deadline. */
  controller: AbortController;
  signal: AbortSignal;
  /** The inputs waiting in mode `steer` that this turn may take at a tool boundary. */
  steering: SteerSource;
}

/** What the turn of a batch leaves for after its reply (compaction), still in the key's lane. */
export interface TurnDone {
  result: TurnResult;
  after?: () => Promise<void>;
}

export interface ActorDeps {
  timer: OneShotTimer;
  now(): number;
  /** The key's queue settings (session overrides > agent > defaults), read as each input arrives. */
  settings(route: Route): Promise<QueueSettings>;
  /** Runs one batch as one turn, in the lane: admission checks, the turn itself. */
  turn(batch: ActorBatch): Promise<TurnDone>;
  /** Records that inputs were dropped (policy `old`), on the key's session; must not throw. */
  dropped(route: Route, texts: string[]): Promise<void>;
  /** The database's leases per key (PostgreSQL): the lane's work holds the key's lease while it runs. */
  leases: KeyLeases | undefined;
  /** The running batch waits for its key's lease (another process holds it): its inputs are admitted now. */
  leaseWait?(batch: ActorBatch): void;
  /** Lane work that may wait behind the running one; beyond it, SESSION_BUSY. */
  maxLane: number;
  /** Called when the actor has nothing running, waiting or arriving: the registry forgets it. */
  idle(actor: SessionActor): void;
}
