import { isSessiondError, SessiondError } from "../model/errors.js";
import type { Session } from "../model/session.js";
import type { SessionScan, Store } from "../store/store.js";
import { type Clock, type IntervalTimer, systemClock, systemTimer, type TimerHandle } from "./clock.js";
import type { InLanes } from "./in-lanes.js";
import {
  dueCutoff,
  dueReset,
  type ResetPolicy,
  type ScheduledResetCause,
  sessionRule,
} from "./reset-policy.js";
import { applyRetention, planRetention, type RetentionPolicy, type RetentionResult } from "./retention.js";

export interface SweptReset {
  key: string;
  /** The generation that was archived (or deleted). */
  sessionId: string;
  cause: ScheduledResetCause;
}

export interface SweepResult {
  /** The sessions reset, in scan order (oldest activity first). Deleted ones too when `keepArchive` is false. */
  archived: SweptReset[];
  /** Sessions the scans returned: the candidates, never the whole store. */
  scanned: number;
  /** Due when scanned but left alone when applied (activity meanwhile, reset by someone else). */
  skipped: number;
}

export interface ResetIfDueOptions {
  /** true (default): archive with a `reset` entry; false: delete the key with every generation. */
  keepArchive?: boolean;
}

/**
 * Resets the key's current session if the policy, with the session's own reset overrides (sessionRule),
 * finds it due at `now`: archives it (the next message starts the next generation) or, with
 * `keepArchive: false`, deletes the key. Reads the session afresh, so it is safe to call inside the
 * session's lane after a scan found it due. Undefined when not due.
 */
export async function resetIfDue(
  store: Store,
  key: string,
  policy: ResetPolicy,
  now: number,
  options: ResetIfDueOptions = {},
): Promise<SweptReset | undefined> {
  const session = await store.getSession(key);
  if (session === undefined) return undefined;
  const cause = dueReset(session, sessionRule(session, policy), now);
  if (cause === undefined) return undefined;
  try {
    if (options.keepArchive === false)
      await store.delete(key).catch((error: unknown) => {
        // Forks read through this history: it is archived instead of deleted.
        if (!isSessiondError(error, "SESSION_HAS_FORKS")) throw error;
        return store.archive(key, cause);
      });
    else await store.archive(key, cause);
  } catch (error) {
    if (isSessiondError(error, "SESSION_NOT_FOUND")) return undefined;
    throw error;
  }
  return { key, sessionId: session.id, cause };
}

/**
 * What the sweep does with a session it found due. The engine passes one that runs `resetIfDue` inside
 * the session's lane, so a scheduled reset never lands in the middle of a turn. Resolves undefined when
 * it left the session alone.
 */
export type ApplyScheduledReset = (
  session: Session,
  cause: ScheduledResetCause,
) => Promise<SweptReset | undefined>;

export interface SweepOptions extends ResetIfDueOptions {
  /** Sessions per scan page, 1..10,000 (default 1,000). */
  limit?: number;
  /** Replaces the default `resetIfDue(store, session.key, policy, now, options)`. */
  apply?: ApplyScheduledReset;
}

/**
 * Resets every session the policy finds due at `now`. Scans only active sessions last active before the
 * latest cutoff of any rule (index-backed, oldest first), then checks each against its own rule, so the
 * work follows the candidates, not the size of the store. Each page's due sessions are reset
 * concurrently, which lets the store batch them into one commit.
 */
export async function sweepDueResets(
  store: Store,
  policy: ResetPolicy,
  now: number,
  options: SweepOptions = {},
): Promise<SweepResult> {
  const result: SweepResult = { archived: [], scanned: 0, skipped: 0 };
  const inactiveBefore = dueCutoff(policy, now);
  if (inactiveBefore === undefined) return result;
  const limit = options.limit ?? 1000;
  const apply: ApplyScheduledReset =
    options.apply ?? ((session) => resetIfDue(store, session.key, policy, now, options));
  let after: SessionScan["after"];
  for (;;) {
    const page = await store.scanSessions({
      state: "active",
      inactiveBefore,
      limit,
      ...(after ? { after } : {}),
    });
    result.scanned += page.length;
    const due: Array<[Session, ScheduledResetCause]> = [];
    for (const session of page) {
      const cause = dueReset(session, sessionRule(session, policy), now);
      if (cause !== undefined) due.push([session, cause]);
    }
    const outcomes = await Promise.allSettled(due.map(([session, cause]) => apply(session, cause)));
    for (const outcome of outcomes) {
      if (outcome.status === "rejected") throw outcome.reason;
      if (outcome.value === undefined) result.skipped += 1;
      else result.archived.push(outcome.value);
    }
    const last = page[page.length - 1];
    if (last === undefined || page.length < limit) return result;
    // Reset sessions have left the active set; the cursor still marks where the page ended.
    after = { time: last.lastActivityAt, id: last.id };
  }
}

export interface SweepReport {
  now: number;
  resets: SweepResult;
  /** Present when a retention policy is set. */
  retention?: RetentionResult;
}

type Source<T> = T | (() => T);

export interface SweeperOptions extends SweepOptions {
  store: Store;
  /** The policy, or a function returning the current one (re-read on every run, for config reloads). */
  policy: Source<ResetPolicy>;
  /** When set, each run also applies retention (at most `retentionBatch` items per run). */
  retention?: Source<RetentionPolicy | undefined>;
  /** Default 10,000; the rest waits for the next run. */
  retentionBatch?: number;
  clock?: Clock;
  timer?: IntervalTimer;
  /** Runs retention's deletes in the keys' lanes; default: directly. */
  inLanes?: InLanes;
  /** After every successful run. */
  onSweep?: (report: SweepReport) => void;
  /** Errors of timer-driven runs end here and never escape the timer. Default: `console.error`. */
  onError?: (error: unknown) => void;
}

function read<T>(source: Source<T>): T {
  return typeof source === "function" ? (source as () => T)() : source;
}

/**
 * Runs `sweepDueResets` (and retention, when configured) every `intervalMs`, so a due reset happens
 * without waiting for the session's next message. Runs never overlap: a tick that finds the previous run
 * still going is skipped.
 */
export class Sweeper {
  private readonly options: SweeperOptions;
  private readonly clock: Clock;
  private readonly timer: IntervalTimer;
  private handle: TimerHandle | undefined;
  private inFlight: Promise<SweepReport> | undefined;

  constructor(options: SweeperOptions) {
    this.options = options;
    this.clock = options.clock ?? systemClock;
    this.timer = options.timer ?? systemTimer;
  }

  get started(): boolean {
    return this.handle !== undefined;
  }

  get running(): boolean {
    return this.inFlight !== undefined;
  }

  /** Schedules a run every `intervalMs` (replacing an earlier schedule). Call `runOnce` for one now. */
  start(intervalMs: number): void {
    if (!Number.isFinite(intervalMs) || intervalMs <= 0) {
      throw new SessiondError(
        "INVALID_ARGUMENT",
        `sweep interval must be a positive number of ms, not ${intervalMs}`,
      );
    }
    if (this.handle !== undefined) this.timer.clearInterval(this.handle);
    this.handle = this.timer.setInterval(() => this.tick(), intervalMs);
  }

  /** Stops the schedule and waits for a run in progress to finish. */
  async stop(): Promise<void> {
    if (this.handle !== undefined) this.timer.clearInterval(this.handle);
    this.handle = undefined;
    await this.inFlight?.catch(() => undefined);
  }

  /** Runs a sweep now, or joins the one in progress; rejects with its error. */
  runOnce(): Promise<SweepReport> {
    if (this.inFlight === undefined) {
      this.inFlight = this.run().finally(() => {
        this.inFlight = undefined;
      });
    }
    return this.inFlight;
  }

  private tick(): void {
    if (this.inFlight !== undefined) return;
    this.runOnce().then(
      (report) => this.report(() => this.options.onSweep?.(report)),
      (error: unknown) => this.report(() => this.onError(error)),
    );
  }

  private onError(error: unknown): void {
    if (this.options.onError) this.options.onError(error);
    else console.error("sessiond: scheduled sweep failed", error);
  }

  /** Callbacks must not turn into unhandled rejections either. */
  private report(callback: () => void): void {
    try {
      callback();
    } catch (error) {
      console.error("sessiond: sweep callback failed", error);
    }
  }

  private async run(): Promise<SweepReport> {
    const { store, keepArchive, limit, apply } = this.options;
    const now = this.clock.now();
    const sweep: SweepOptions = {};
    if (keepArchive !== undefined) sweep.keepArchive = keepArchive;
    if (limit !== undefined) sweep.limit = limit;
    if (apply !== undefined) sweep.apply = apply;
    const report: SweepReport = {
      now,
      resets: await sweepDueResets(store, read(this.options.policy), now, sweep),
    };
    const retention = this.options.retention === undefined ? undefined : read(this.options.retention);
    if (retention !== undefined) {
      const plan = await planRetention(store, retention, now, {
        limit: this.options.retentionBatch ?? 10_000,
      });
      report.retention = await applyRetention(store, plan, this.options.inLanes);
    }
    return report;
  }
}
