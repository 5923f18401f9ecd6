import type { Route } from "../keys/index.js";
import type { OneShotTimer } from "../lifecycle/clock.js";
import type { Envelope } from "../model/envelope.js";
import { SessiondError } from "../model/errors.js";
import { newId } from "../model/ids.js";
import { type AdmitInput, type Inbox, isSharedInbox } from "../model/inbox.js";
import { DEFAULT_QUEUE, type QueueSettings } from "../model/queue.js";
import type { InboxWrite } from "../store/driver.js";
import { admitWrite } from "../store/store-inbox.js";
import { noteIncomingTrace } from "../tracing/spans.js";
import { admissionOf, admittedEnvelope, inboxEnd } from "./admission.js";
import type { SessionEvents } from "./events.js";
import { holdAll } from "./lanes.js";
import type {
  ActorBatch,
  ActorItem,
  ItemAdmission,
  KeyLeases,
  QueuedInput,
  TurnDone,
  TurnOutcome,
} from "./queue-types.js";
import { SessionActor } from "./session-actor.js";
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
  /** The inbox is the store's own: an admission can commit with its input's entry (`ItemAdmission.deferred`). */
  inboxInStore: boolean;
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
   * run again after a restart, so its turns are only tracked. `withInput`: a caller that waits for the
   * reply (no acknowledgement before it) lets an input whose turn starts at once be admitted in the same
   * commit as its user entry.
   */
  submit(
    route: Route,
    envelope: Envelope,
    run: TurnRunner,
    signal: AbortSignal | undefined,
    durable: boolean,
    withInput = false,
  ): SubmittedTurn {
    const { inbox, now } = this.deps;
    const at = now();
    const id = newId(at);
    const actor = this.actorOf(route.key);
    let admission: ItemAdmission | undefined;
    const deferred =
      durable && inbox && withInput && this.deps.inboxInStore && actor.startsAtOnce()
        ? deferredAdmission(admissionOf(id, route.key, envelope, at))
        : undefined;
    if (deferred) admission = deferred;
    else if (durable && inbox) {
      const pending: ItemAdmission = { written: Promise.resolve() };
      pending.written = actor.admit(
        () => inbox.admit(admissionOf(id, route.key, envelope, at)),
        (outcome) => {
          if ("value" in outcome) {
            pending.stored = outcome.value.admitted;
            return;
          }
          pending.failed = true;
          pending.failure = outcome.error;
          // A write that failed fails its turn at once (a waiting input leaves the FIFO; a running one stops).
          if (!actor.withdraw(id, outcome.error)) item.settle({ error: outcome.error });
        },
      );
      admission = pending;
    }
    const runs = admission ? admittedEnvelope(id, envelope) : envelope;
    noteIncomingTrace(runs);
    const { item, result } = this.itemOf(id, route, runs, run, signal, admission);
    actor.submit(item);
    return {
      id,
      key: route.key,
      get stored() {
        return admission ? admission.written.then(() => rethrow(admission)) : Promise.resolve();
      },
      result,
    };
  }

  /** Queues again an input the inbox already holds (recovery, or a take-over from a dead process). */
  resubmit(id: string, route: Route, envelope: Envelope, run: TurnRunner): Promise<TurnResult> {
    const admission = { written: Promise.resolve(), stored: true };
    const { item, result } = this.itemOf(
      id,
      route,
      admittedEnvelope(id, envelope),
      run,
      undefined,
      admission,
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
    return holdAll(keys, (key, next) => this.exclusive(key, next), work);
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
        leaseWait: (batch) => this.admitWaiting(batch),
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
    const { events, inbox, statuses, now } = this.deps;
    events.emit({ type: "turn.started", key, agent });
    try {
      const ids: string[] = [];
      // One input alone commits its admission with its entry (run-turn.ts); several are admitted first.
      const alone = batch.items.length === 1 && batch.context.length === 0 && batch.summary === undefined;
      for (const { id, admission } of batch.items) {
        if (!admission) continue;
        if (admission.deferred) {
          const { writing } = admission.deferred;
          if (alone && !writing) continue;
          await (writing ?? this.admitNow(admission.deferred));
        }
        if (admission.stored === undefined && !admission.failed) await admission.written;
        rethrow(admission);
        if (admission.stored) ids.push(id);
      }
      if (inbox && isSharedInbox(inbox) && ids.length > 0 && !(await inbox.start(ids, now()))) {
        throw new SessiondError(
          "TURN_TAKEN_OVER",
          "another process took this input over while this one was paused past its heartbeat; it runs there (GET /api/turns/{id} on any gateway tells)",
          { details: { ids } },
        );
      }
      for (const item of batch.items) statuses.running(item.id);
      const last = batch.items.at(-1) as ActorItem;
      const { steering } = batch;
      const steered: ActorBatch = {
        ...batch,
        steering: {
          ...steering,
          take: (accept) => {
            const taken = steering.take(accept);
            for (const item of taken) statuses.running(item.id);
            return taken;
          },
        },
      };
      const done = await this.deps.turn(steered, (progress) => statuses.watch(last.id, progress));
      events.emit({ type: "turn.finished", key, agent, ok: true });
      return done;
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      events.emit({ type: "turn.finished", key, agent, ok: false, error: message });
      throw error;
    }
  }

  /**
   * Writes the deferred admissions of a batch whose key's lease another process holds: its inputs are
   * durable (and visible to every gateway) while it waits, not only once it runs.
   */
  private admitWaiting(batch: ActorBatch): void {
    for (const { admission } of batch.items) {
      const deferred = admission?.deferred;
      if (!deferred || deferred.writing) continue;
      deferred.writing = this.admitNow(deferred);
      // Awaited (and its failure thrown) by the turn, once it has the lease.
      deferred.writing.catch(() => {});
    }
  }

  /** Writes a deferred admission on its own (its turn takes other inputs too). */
  private async admitNow(deferred: NonNullable<ItemAdmission["deferred"]>): Promise<void> {
    const { inbox } = this.deps;
    try {
      deferred.settle((await (inbox as Inbox).admit(deferred.input)).admitted);
    } catch (error) {
      deferred.settle(false);
      throw error;
    }
  }

  private itemOf(
    id: string,
    route: Route,
    envelope: Envelope,
    run: TurnRunner,
    signal: AbortSignal | undefined,
    admission: ItemAdmission | undefined,
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
    const item: ActorItem = {
      id,
      route,
      envelope,
      run,
      signal,
      settings: DEFAULT_QUEUE,
      admittedAt: now(),
      admission,
      settle: (outcome: TurnOutcome) => {
        if (settled) return;
        settled = true;
        statuses.settle(id, outcome);
        // A turn that ended before its input was stored never wrote the admission: nothing to end.
        admission?.deferred?.settle(false);
        // Begun before the caller hears, not awaited: when this write is lost, recovery finds the turn's
        // entries and settles the item from them.
        if (admission && inbox) {
          const finish = () => {
            if (!admission.stored || admission.ended) return;
            const [state, end] = inboxEnd(outcome);
            inbox.transition(id, state, now(), end).catch(() => {});
          };
          if (admission.stored === undefined && !admission.failed) void admission.written.then(finish);
          else finish();
        }
        if ("result" in outcome) resolve(outcome.result);
        else reject(outcome.error);
      },
    };
    return { item, result };
  }
}

/** An admission left for its input's commit; undefined when its envelope cannot be stored (admitted now, to fail). */
function deferredAdmission(input: AdmitInput): ItemAdmission | undefined {
  let write: InboxWrite;
  try {
    write = admitWrite(input);
  } catch {
    return undefined;
  }
  let wrote!: () => void;
  const admission: ItemAdmission = { written: new Promise<void>((resolve) => (wrote = resolve)) };
  admission.deferred = {
    input,
    write,
    settle: (stored) => {
      if (!admission.deferred) return;
      admission.deferred = undefined;
      admission.stored = stored;
      wrote();
    },
  };
  return admission;
}

/** Throws the failure of an input's inbox write, if it failed. */
function rethrow(admission: ItemAdmission): void {
  if (admission.failed) throw admission.failure;
}
