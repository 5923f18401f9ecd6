import type { Route } from "../keys/index.js";
import type { EntryInput } from "../model/entry.js";
import type { Envelope } from "../model/envelope.js";
import { SessiondError } from "../model/errors.js";
import { type Inbox, type InboxItem, isSharedInbox, type SharedInbox } from "../model/inbox.js";
import { redactSecrets } from "../secrets/redact.js";
import type { Store } from "../store/store.js";
import { admittedMessageId } from "./admission.js";
import { planRecovery } from "./recovery.js";
import type { SessionActors } from "./session-actors.js";
import type { TurnRunner } from "./turn.js";

/** What `engine.recover()` did with the inputs the inbox still had unfinished. */
export interface RecoveryReport {
  /** Queued again, in admission order. */
  requeued: number;
  /** Their reply was stored before the crash: only marked done. */
  answered: number;
  /** Not run again (cut off by the crash, or older than `turns.recover_max_age`): a note says so. */
  interrupted: number;
}

export interface InboxRecoveryDeps {
  inbox: Inbox | undefined;
  actors: SessionActors;
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
 * What the inbox still has unfinished after a crash, settled: answered inputs marked done, cut-off or too
 * old ones noted and marked interrupted, the rest queued again. On a shared inbox, also the inputs of any
 * process that dies while this one runs.
 */
export class InboxRecovery {
  /** Taken over from a dead process but not settled yet (the store failed): tried again on the next beat. */
  private unsettled: InboxItem[] = [];
  private takingOver: Promise<void> | undefined;
  private stopWatching: (() => void) | undefined;

  constructor(private readonly deps: InboxRecoveryDeps) {}

  /**
   * Settles what the inbox has unfinished: marks done what was answered, notes and marks interrupted
   * what was cut off or is too old, and queues the rest again, oldest first. Call once, before serving.
   * On a shared inbox only the inputs of dead processes are taken (their heartbeat lapsed), and from then
   * on this process takes over those of any process that dies while it runs (`onTakeOver` hears of each).
   */
  async recover(onTakeOver?: (report: RecoveryReport) => void): Promise<RecoveryReport> {
    const { inbox } = this.deps;
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
      const route = { ...this.deps.route(item.envelope), key: item.key };
      // Its caller is gone: the outcome is in the inbox and the turn's status.
      this.deps.actors
        .resubmit(item.id, route, item.envelope, this.deps.runnerFor(item.envelope))
        .catch(() => {});
      report.requeued++;
    }
    return report;
  }
}

function preview(text: string): string {
  const cut = text.length > PREVIEW_CHARS ? `${text.slice(0, PREVIEW_CHARS)}…` : text;
  return JSON.stringify(redactSecrets(cut));
}
