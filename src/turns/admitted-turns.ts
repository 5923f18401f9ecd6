import type { Route } from "../keys/index.js";
import type { EntryInput } from "../model/entry.js";
import type { Envelope } from "../model/envelope.js";
import { SessiondError } from "../model/errors.js";
import { newId } from "../model/ids.js";
import { type Inbox, type InboxItem, isSharedInbox, type SharedInbox } from "../model/inbox.js";
import { redactSecrets } from "../secrets/redact.js";
import type { Store } from "../store/store.js";
import { type Admission, admittedMessageId } from "./admission.js";
import { planRecovery } from "./recovery.js";
import type { TurnProgress, TurnResult, TurnRunner } from "./turn.js";
import type { TurnQueue } from "./turn-queue.js";
import { type EvictedTurn, statusOfItem, type TurnStatus, type TurnStatuses } from "./turn-status.js";

/** A turn handed to its queue: `id` names it, `stored` resolves once its input is in the inbox. */
export interface SubmittedTurn {
  id: string;
  key: string;
  stored: Promise<void>;
  result: Promise<TurnResult>;
}

/** What `engine.recover()` did with the inputs the inbox still had unfinished. */
export interface RecoveryReport {
  /** Queued again, in admission order. */
  requeued: number;
  /** Their reply was stored before the crash: only marked done. */
  answered: number;
  /** Not run again (cut off by the crash, or older than `turns.recover_max_age`): a note says so. */
  interrupted: number;
}

export interface AdmittedTurnsDeps {
  admission: Admission | undefined;
  queue: TurnQueue;
  statuses: TurnStatuses;
  store: Store;
  now(): number;
  /** Pending inputs older than this at recovery are not run. */
  recoverMaxAgeMs: number;
  route(envelope: Envelope): Route;
  /** The agent's runtime as a runner: what a recovered input runs on. */
  runnerFor(envelope: Envelope): TurnRunner;
  /** Appends a note to the key's session, in its lane. */
  note(key: string, entry: EntryInput): Promise<void>;
}

/** Finished items stay in the inbox this long after they ended (recovery prunes older ones). */
const KEEP_FINISHED_MS = 24 * 3600_000;
const PREVIEW_CHARS = 80;

/**
 * Agent turns with durable admission: each input is written to the inbox while it takes its place in the
 * queue (so the order of arrival is kept), its turn stores nothing before that write is durable, and a
 * caller hears of the turn only after it. After a crash, `recover` settles or re-queues what was left.
 */
export class AdmittedTurns {
  /** Admission writes of turns still in the queue: a batch waits for its inputs' before it runs. */
  private readonly writes = new Map<string, Promise<boolean>>();
  /** The id of the turn each busy key is running (the last input of its batch). */
  private readonly runningOn = new Map<string, string>();
  /** Inputs in the inbox that this process admitted or recovered and has not settled yet. */
  private readonly inInbox = new Set<string>();
  /** Taken over from a dead process but not settled yet (the store failed): tried again on the next beat. */
  private unsettled: InboxItem[] = [];
  private takingOver: Promise<void> | undefined;
  private stopWatching: (() => void) | undefined;

  constructor(private readonly deps: AdmittedTurnsDeps) {}

  /**
   * Queues a turn; `durable` (an agent turn, with an inbox) stores its input in the inbox first. A
   * runner of the caller's cannot run again after a restart, so its turns are only tracked.
   */
  submit(
    route: Route,
    envelope: Envelope,
    run: TurnRunner,
    signal: AbortSignal | undefined,
    durable: boolean,
  ): SubmittedTurn {
    const { queue, statuses } = this.deps;
    const admission = durable ? this.deps.admission : undefined;
    if (!admission) {
      const id = newId(this.deps.now());
      statuses.queued(id, route.key);
      const result = queue.submit(route, envelope, run, signal, id);
      this.settleWith(id, result, Promise.resolve(false));
      return { id, key: route.key, stored: Promise.resolve(), result };
    }
    const admitted = admission.admit(route.key, envelope);
    const { id } = admitted;
    statuses.queued(id, route.key);
    this.writes.set(id, admitted.stored);
    this.inInbox.add(id);
    const queued = queue.submit(route, admitted.envelope, run, signal, id);
    admitted.stored.catch(() => queue.cancel(id));
    this.settleWith(id, queued, admitted.stored);
    const stored = admitted.stored.then(() => {});
    return { id, key: route.key, stored, result: Promise.all([stored, queued]).then(([, r]) => r) };
  }

  /**
   * Called when a batch starts: resolves once its inputs are stored in the inbox (rejects when one could
   * not be), and marks them running.
   */
  async ready(key: string, ids: readonly string[]): Promise<void> {
    for (const id of ids) await this.writes.get(id);
    const inbox = this.deps.admission?.inbox;
    const admitted = ids.filter((id) => this.inInbox.has(id));
    if (inbox && isSharedInbox(inbox) && admitted.length > 0) {
      if (!(await inbox.start(admitted, this.deps.now()))) {
        throw new SessiondError(
          "TURN_TAKEN_OVER",
          "another process took this input over while this one was paused past its heartbeat; it runs there (GET /api/turns/{id} on any gateway tells)",
          { details: { ids: admitted } },
        );
      }
    }
    for (const id of ids) this.deps.statuses.running(id);
    const last = ids.at(-1);
    if (last !== undefined) this.runningOn.set(key, last);
  }

  /**
   * Called when a running turn takes steer inputs: which of them are stored in the inbox (one whose write
   * failed is left out, its caller already told), marked running.
   */
  async joined(ids: readonly string[]): Promise<boolean[]> {
    const stored = await Promise.all(
      ids.map((id) =>
        (this.writes.get(id) ?? Promise.resolve(true)).then(
          () => true,
          () => false,
        ),
      ),
    );
    ids.forEach((id, i) => {
      if (stored[i]) this.deps.statuses.running(id);
    });
    return stored;
  }

  /** The progress of the turn now running on `key` (the pipeline reports it as the runtime starts). */
  watch(key: string, progress: TurnProgress): void {
    const id = this.runningOn.get(key);
    if (id !== undefined) this.deps.statuses.watch(id, progress);
  }

  /**
   * Stops a turn: a waiting one is cancelled (TURN_CANCELLED); a running one is aborted, its partial reply
   * stored with a `TURN_INTERRUPTED` note (TURN_INTERRUPTED to its caller). What it was, or undefined when
   * no turn with that id is waiting or running.
   */
  abort(id: string): "cancelled" | "aborted" | undefined {
    if (this.deps.queue.cancel(id)) return "cancelled";
    const reason = new SessiondError("TURN_INTERRUPTED", `turn ${id} was aborted by an operator`, {
      details: { by: "operator" },
    });
    return this.deps.queue.abort(id, reason) ? "aborted" : undefined;
  }

  /** A turn's state, its result, or that its result was evicted; after a restart, what the inbox says. */
  async status(id: string): Promise<TurnStatus | EvictedTurn | undefined> {
    const known = this.deps.statuses.get(id);
    if (known) return known;
    const item = await this.deps.admission?.inbox.get(id);
    return item && statusOfItem(item);
  }

  /** Records how a turn ended: in the statuses, and in the inbox when it was admitted there. */
  private settleWith(id: string, queued: Promise<TurnResult>, stored: Promise<boolean>): void {
    const admission = this.deps.admission;
    const settle = async (outcome: { result: TurnResult } | { error: unknown }) => {
      this.writes.delete(id);
      this.inInbox.delete(id);
      for (const [key, running] of this.runningOn) if (running === id) this.runningOn.delete(key);
      this.deps.statuses.settle(id, outcome);
      if (await stored.catch(() => false)) admission?.finish(id, outcome);
    };
    queued.then(
      (result) => settle({ result }),
      (error: unknown) => settle({ error }),
    );
  }

  /**
   * Settles what the inbox has unfinished: marks done what was answered, notes and marks interrupted
   * what was cut off or is too old, and queues the rest again, oldest first. Call once, before serving.
   * On a shared inbox only the inputs of dead processes are taken (their heartbeat lapsed), and from then
   * on this process takes over those of any process that dies while it runs (`onTakeOver` hears of each).
   */
  async recover(onTakeOver?: (report: RecoveryReport) => void): Promise<RecoveryReport> {
    const inbox = this.deps.admission?.inbox;
    if (!inbox) return { requeued: 0, answered: 0, interrupted: 0 };
    const shared = isSharedInbox(inbox) ? inbox : undefined;
    const report = await this.settleItems(inbox, shared ? await shared.takeOver() : await inbox.unfinished());
    await inbox.prune(this.deps.now() - KEEP_FINISHED_MS);
    if (shared && !this.stopWatching) {
      this.stopWatching = shared.onHeartbeat((orphans) => {
        if (orphans || this.unsettled.length > 0) this.takeOver(shared, onTakeOver);
      });
    }
    return report;
  }

  /** Stops taking over other processes' inputs (the engine closes). */
  async close(): Promise<void> {
    this.stopWatching?.();
    await this.takingOver;
  }

  /** One take-over at a time; what could not be settled stays for the next heartbeat. */
  private takeOver(inbox: SharedInbox, onTakeOver?: (report: RecoveryReport) => void): void {
    if (this.takingOver) return;
    this.takingOver = (async () => {
      const items = [...this.unsettled, ...(await inbox.takeOver())];
      this.unsettled = items;
      if (items.length === 0) return;
      const report = await this.settleItems(inbox, items);
      this.unsettled = [];
      onTakeOver?.(report);
    })()
      .catch(() => {})
      .finally(() => {
        this.takingOver = undefined;
      });
  }

  private async settleItems(inbox: Inbox, items: InboxItem[]): Promise<RecoveryReport> {
    const report: RecoveryReport = { requeued: 0, answered: 0, interrupted: 0 };
    const now = this.deps.now();
    const plans = await planRecovery(this.deps.store, items, now, this.deps.recoverMaxAgeMs);
    for (const plan of plans) {
      const { item } = plan;
      if (plan.action === "done") {
        await inbox.transition(item.id, "done", now, { sessionId: plan.sessionId, replyId: plan.replyId });
        report.answered++;
      } else if (plan.action === "interrupted") {
        // On a shared inbox the input was another process's: say which, rather than guess at a restart.
        const from = item.takenFrom;
        const text = plan.input
          ? from
            ? `The turn was taken over from gateway ${from} (it stopped, or its heartbeat lapsed) before it replied; it is not run again.`
            : "The turn was cut off by a restart before it replied; it is not run again."
          : `Not run after ${from ? `a take-over from gateway ${from}` : "a restart"}: ${preview(item.envelope.text)} waited ${Math.round((plan.ageMs ?? 0) / 1000)} s, longer than turns.recover_max_age.`;
        await this.deps.note(item.key, {
          type: "note",
          level: "info",
          code: "TURN_INTERRUPTED",
          text,
          idempotencyKey: plan.input
            ? `turn:${plan.input.id}:interrupted`
            : `${admittedMessageId(item.id)}:interrupted`,
        });
        const error = new SessiondError("TURN_INTERRUPTED", text);
        await inbox.transition(item.id, "interrupted", now, {
          ...(plan.input ? { sessionId: plan.input.sessionId } : {}),
          error: { code: error.code, message: text },
        });
        report.interrupted++;
      }
    }
    for (const plan of plans) {
      if (plan.action !== "run") continue;
      const { item } = plan;
      const envelope = item.envelope.platformMessageId
        ? item.envelope
        : { ...item.envelope, platformMessageId: admittedMessageId(item.id) };
      const route = { ...this.deps.route(item.envelope), key: item.key };
      this.deps.statuses.queued(item.id, item.key);
      this.inInbox.add(item.id);
      const queued = this.deps.queue.submit(
        route,
        envelope,
        this.deps.runnerFor(item.envelope),
        undefined,
        item.id,
      );
      this.settleWith(item.id, queued, Promise.resolve(true));
      report.requeued++;
    }
    return report;
  }
}

function preview(text: string): string {
  const cut = text.length > PREVIEW_CHARS ? `${text.slice(0, PREVIEW_CHARS)}…` : text;
  return JSON.stringify(redactSecrets(cut));
}
