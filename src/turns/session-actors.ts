import type { Route } from "../keys/index.js";
import type { OneShotTimer } from "../lifecycle/clock.js";
import type { Envelope } from "../model/envelope.js";
import { SessiondError } from "../model/errors.js";
import { newId } from "../model/ids.js";
import { type Inbox, isSharedInbox } from "../model/inbox.js";
import { DEFAULT_QUEUE, type QueueSettings } from "../model/queue.js";
import { admissionOf, admittedEnvelope, inboxEnd } from "./admission.js";
import type { SessionEvents } from "./events.js";
import type { KeyLeases, QueuedInput } from "./queue-types.js";
import {
  type ActorBatch,
  type ActorItem,
  SessionActor,
  type TurnDone,
  type TurnOutcome,
} from "./session-actor.js";
import type { TurnProgress, TurnResult, TurnRunner } from "./turn.js";
import type { TurnStatuses } from "./turn-status.js";

/** A turn handed to its key's actor: `id` names it, `stored` resolves once its input is in the inbox. */
export interface SubmittedTurn {
  id: string;
  key: string;
  stored: Promise<void>;
  result: Promise<TurnResult>;
}

export interface SessionActorsDeps {
  timer: OneShotTimer;
  now(): number;
  /** Where agent turns' inputs are admitted (durable admission); none: turns are only tracked. */
  inbox: Inbox | undefined;
  statuses: TurnStatuses;
  events: SessionEvents;
  leases: KeyLeases | undefined;
  /** Lane work that may wait behind the running one on one key. */
  maxLane: number;
  settings(route: Route): Promise<QueueSettings>;
  /** Runs one batch as one turn, in the key's lane, once its inputs are admitted. */
  turn(batch: ActorBatch, progress: (progress: TurnProgress) => void): Promise<TurnDone>;
  dropped(route: Route, texts: string[]): Promise<void>;
}

/**
 * The session actors of the keys that have work, created with their first and forgotten when idle; the
 * engine's one door to turns (submit, abort, inspect) and to each key's lane.
 */
export class SessionActors {
  private readonly actors = new Map<string, SessionActor>();
  private drained: Array<() => void> = [];

  constructor(private readonly deps: SessionActorsDeps) {}

  /**
   * Queues a turn; `durable` (an agent turn, with an inbox) stores its input in the inbox first, in order
   * of arrival, and its turn stores nothing before that write is durable. A runner of the caller's cannot
   * run again after a restart, so its turns are only tracked.
   */
  submit(
    route: Route,
    envelope: Envelope,
    run: TurnRunner,
    signal: AbortSignal | undefined,
    durable: boolean,
  ): SubmittedTurn {
    const { inbox, now } = this.deps;
    const at = now();
    const id = newId(at);
    const actor = this.actorOf(route.key);
    const stored =
      durable && inbox
        ? actor.admit(() => inbox.admit(admissionOf(id, route.key, envelope, at))).then((r) => r.admitted)
        : undefined;
    const runs = stored ? admittedEnvelope(id, envelope) : envelope;
    const { item, result } = this.itemOf(id, route, runs, run, signal, stored);
    // A write that failed fails its turn at once (a waiting input leaves the FIFO; a running one's turn stops).
    stored?.catch((error: unknown) => {
      if (!actor.withdraw(id, error)) item.settle({ error });
    });
    actor.submit(item);
    const admitted = stored ? stored.then(() => {}) : Promise.resolve();
    return { id, key: route.key, stored: admitted, result };
  }

  /** Queues again an input the inbox already holds (recovery, or a take-over from a dead process). */
  resubmit(id: string, route: Route, envelope: Envelope, run: TurnRunner): Promise<TurnResult> {
    const { item, result } = this.itemOf(
      id,
      route,
      admittedEnvelope(id, envelope),
      run,
      undefined,
      Promise.resolve(true),
    );
    this.actorOf(route.key).submit(item);
    return result;
  }

  /** Runs `work` in `key`'s lane (see `SessionActor.exclusive`). */
  exclusive<T>(key: string, work: () => Promise<T>): Promise<T> {
    return this.actorOf(key).exclusive(work);
  }

  /** Runs `work` holding the lanes of every key, taken in sorted order so two such calls never deadlock. */
  exclusiveAll<T>(keys: readonly string[], work: () => Promise<T>): Promise<T> {
    const sorted = [...new Set(keys)].sort();
    const hold = (i: number): Promise<T> =>
      i === sorted.length ? work() : this.exclusive(sorted[i] as string, () => hold(i + 1));
    return hold(0);
  }

  /** Resolves once the lane work accepted so far on `key` has finished. */
  async idle(key: string): Promise<void> {
    await this.actors.get(key)?.laneIdle();
  }

  /** Every input waiting, oldest first per key. */
  list(): QueuedInput[] {
    return [...this.actors.values()].flatMap((actor) => actor.waitingInputs());
  }

  /** Turns running or waiting, per busy key. */
  depths(): Map<string, number> {
    const depths = new Map<string, number>();
    for (const [key, actor] of this.actors) {
      const n = actor.depth();
      if (n > 0) depths.set(key, n);
    }
    return depths;
  }

  /** Cancels a waiting input (its caller gets TURN_CANCELLED); false when none has that id. */
  cancel(id: string): boolean {
    for (const actor of this.actors.values()) if (actor.cancel(id)) return true;
    return false;
  }

  /**
   * Stops a turn: a waiting one is cancelled (TURN_CANCELLED); a running one is aborted, its partial reply
   * stored with a `TURN_INTERRUPTED` note. What it was, or undefined when no turn has that id.
   */
  abort(id: string): "cancelled" | "aborted" | undefined {
    if (this.cancel(id)) return "cancelled";
    const reason = new SessiondError("TURN_INTERRUPTED", `turn ${id} was aborted by an operator`, {
      details: { by: "operator" },
    });
    for (const actor of this.actors.values()) if (actor.abort(id, reason)) return "aborted";
    return undefined;
  }

  /** Resolves when no key has a turn running or waiting, nor lane work (debounced batches start first). */
  async drain(): Promise<void> {
    while (this.actors.size > 0) await new Promise<void>((resolve) => this.drained.push(resolve));
  }

  private actorOf(key: string): SessionActor {
    let actor = this.actors.get(key);
    if (!actor) {
      const { deps } = this;
      actor = new SessionActor(key, {
        timer: deps.timer,
        now: deps.now,
        settings: deps.settings,
        dropped: deps.dropped,
        leases: deps.leases,
        maxLane: deps.maxLane,
        turn: (batch) => this.turn(batch),
        idle: (idle) => {
          if (this.actors.get(idle.key) === idle) this.actors.delete(idle.key);
          if (this.actors.size === 0) for (const resolve of this.drained.splice(0)) resolve();
        },
      });
      this.actors.set(key, actor);
    }
    return actor;
  }

  /** A batch's turn, once each input is durable in the inbox and (on a shared one) still this process's. */
  private async turn(batch: ActorBatch): Promise<TurnDone> {
    const { key, agent } = batch.route;
    const { events } = this.deps;
    events.emit({ type: "turn.started", key, agent });
    try {
      const done = await this.admittedTurn(batch);
      events.emit({ type: "turn.finished", key, agent, ok: true });
      return done;
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      events.emit({ type: "turn.finished", key, agent, ok: false, error: message });
      throw error;
    }
  }

  private async admittedTurn(batch: ActorBatch): Promise<TurnDone> {
    const { inbox, statuses, now } = this.deps;
    const ids: string[] = [];
    for (const item of batch.items) if (item.stored && (await item.stored)) ids.push(item.id);
    if (inbox && isSharedInbox(inbox) && ids.length > 0 && !(await inbox.start(ids, now()))) {
      throw new SessiondError(
        "TURN_TAKEN_OVER",
        "another process took this input over while this one was paused past its heartbeat; it runs there (GET /api/turns/{id} on any gateway tells)",
        { details: { ids } },
      );
    }
    for (const item of batch.items) statuses.running(item.id);
    const last = batch.items.at(-1) as ActorItem;
    return this.deps.turn(batch, (progress) => statuses.watch(last.id, progress));
  }

  private itemOf(
    id: string,
    route: Route,
    envelope: Envelope,
    run: TurnRunner,
    signal: AbortSignal | undefined,
    stored: Promise<boolean> | undefined,
  ): { item: ActorItem; result: Promise<TurnResult> } {
    const { statuses, inbox, now } = this.deps;
    statuses.queued(id, route.key);
    let resolve!: (result: TurnResult) => void;
    let reject!: (error: unknown) => void;
    const result = new Promise<TurnResult>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    let settled = false;
    // Whether the inbox write stored the item, once it is known: the end is then written at once.
    const admission: { known?: boolean } = {};
    stored?.then(
      (admitted) => {
        admission.known = admitted;
      },
      () => {},
    );
    const item: ActorItem = {
      id,
      route,
      envelope,
      run,
      signal,
      settings: DEFAULT_QUEUE,
      admittedAt: now(),
      stored,
      settle: (outcome: TurnOutcome) => {
        if (settled) return;
        settled = true;
        statuses.settle(id, outcome);
        // Begun before the caller hears, not awaited: when this write is lost, recovery finds the turn's
        // entries and settles the item from them.
        if (stored && inbox) {
          const finish = (admitted: boolean) => {
            if (!admitted) return;
            const [state, end] = inboxEnd(outcome);
            inbox.transition(id, state, now(), end).catch(() => {});
          };
          if (admission.known === undefined) stored.then(finish, () => {});
          else finish(admission.known);
        }
        if ("result" in outcome) resolve(outcome.result);
        else reject(outcome.error);
      },
    };
    return { item, result };
  }
}
