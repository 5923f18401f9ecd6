import type { Route } from "../keys/index.js";
import type { TimerHandle } from "../lifecycle/clock.js";
import type { Envelope } from "../model/envelope.js";
import { SessiondError } from "../model/errors.js";
import { followSignal } from "./follow-signal.js";
import { attempt, KeyLane } from "./key-lane.js";
import type {
  ActorBatch,
  ActorDeps,
  ActorItem,
  QueuedInput,
  SteerSource,
  TurnDone,
  TurnOutcome,
} from "./queue-types.js";

const PREVIEW_CHARS = 80;

/**
 * Everything about the turns of one session key: the FIFO of waiting inputs by queue mode (followup,
 * collect, steer, interrupt, debounce, the cap and its drop policy), the lane every change to the key runs
 * in (one at a time, holding the key's lease on PostgreSQL), the inbox writes of its admissions in order
 * of arrival, and the turn running now. An idle key has no actor.
 */
export class SessionActor {
  private running: { controller: AbortController; batch: ActorBatch } | undefined;
  private readonly waiting: ActorItem[] = [];
  /** Texts dropped by `summarize`, folded into one entry before the next turn, and the route they came on. */
  private readonly summarized: string[] = [];
  private summaryRoute: Route | undefined;
  private timer: TimerHandle | undefined;
  private lastArrivalAt = 0;
  /** Arrivals are handled one at a time, in order, while their settings are read. */
  private arrivals: Promise<void> | undefined;
  private arriving = 0;
  /** Called after each input joins `waiting`: a running turn's `steering.wait`. */
  private readonly woken = new Set<() => void>();
  /** Where every change to the key runs, the turns included. */
  private readonly lane: KeyLane;
  /** The last inbox write of this key: the next one is written after it (a pool may reorder them). */
  private admissionTail: Promise<unknown> | undefined;
  /** Removes the caller-signal listener of each waiting input. */
  private readonly releases = new Map<string, () => void>();

  constructor(
    readonly key: string,
    private readonly deps: ActorDeps,
  ) {
    this.lane = new KeyLane(key, {
      maxQueue: deps.maxLane,
      leases: deps.leases,
      onLeaseWait: () => {
        if (this.running) this.deps.leaseWait?.(this.running.batch);
      },
      onIdle: () => this.forgetIfIdle(),
    });
  }

  /** Takes one input; an idle key starts its turn at once, in the caller's tick (before later lane work). */
  submit(item: ActorItem): void {
    if (this.isIdle()) {
      if (item.signal?.aborted) item.settle({ error: cancelled(this.key) });
      else this.start([item]);
      this.forgetIfIdle();
      return;
    }
    this.arriving++;
    const arrive = async () => {
      try {
        item.settings = await this.deps.settings(item.route);
        // Its caller may have given up while the settings were read.
        if (item.signal?.aborted) throw cancelled(this.key);
      } catch (error) {
        this.arriving--;
        item.settle({ error });
        this.forgetIfIdle();
        return;
      }
      this.arriving--;
      this.arrive(item);
    };
    this.arrivals = this.arrivals ? this.arrivals.then(arrive) : arrive();
  }

  /**
   * Writes an admission after the key's previous one, so the inbox keeps their order of arrival (a pool may
   * reorder concurrent inserts); `ended` hears how it went.
   */
  admit<T>(
    write: () => Promise<T>,
    ended: (outcome: { value: T } | { error: unknown }) => void,
  ): Promise<void> {
    const previous = this.admissionTail;
    const started = previous ? previous.then(write) : attempt(write);
    const tail: Promise<void> = started.then(
      (value) => {
        ended({ value });
        this.admitted(tail);
      },
      (error: unknown) => {
        ended({ error });
        this.admitted(tail);
      },
    );
    this.admissionTail = tail;
    return tail;
  }

  private admitted(tail: Promise<void>): void {
    if (this.admissionTail !== tail) return;
    this.admissionTail = undefined;
    this.forgetIfIdle();
  }

  /** Runs `work` in the key's lane (see `KeyLane`). */
  exclusive<T>(work: () => Promise<T>): Promise<T> {
    return this.lane.run(work);
  }

  /** Resolves once the lane work accepted so far has finished (never rejects). */
  laneIdle(): Promise<void> {
    return this.lane.idle();
  }

  /** Turns running or waiting, or lane work, whichever is more. */
  depth(): number {
    return Math.max(this.lane.size, this.waiting.length + (this.running ? 1 : 0));
  }

  waitingInputs(): QueuedInput[] {
    return this.waiting.map((item) => ({
      id: item.id,
      key: this.key,
      agent: item.route.agent,
      preview: item.envelope.text.slice(0, PREVIEW_CHARS),
      mode: item.settings.mode,
      admittedAt: item.admittedAt,
    }));
  }

  /** Takes a waiting input out of the FIFO and settles it with `error`; false when none has that id. */
  withdraw(id: string, error: unknown): boolean {
    const at = this.waiting.findIndex((item) => item.id === id);
    if (at < 0) return false;
    const [item] = this.waiting.splice(at, 1) as [ActorItem];
    this.release(item);
    item.settle({ error });
    this.forgetIfIdle();
    return true;
  }

  cancel(id: string): boolean {
    return this.withdraw(id, cancelled(this.key));
  }

  /** Aborts the running turn when it has this input; false when it has not. */
  abort(id: string, reason: Error): boolean {
    if (!this.running?.batch.items.some((item) => item.id === id)) return false;
    this.running.controller.abort(reason);
    return true;
  }

  /**
   * Whether an input submitted now is the next turn, behind no other input (lane work such as the last
   * turn's compaction may still run first).
   */
  startsAtOnce(): boolean {
    return this.isIdle() && this.admissionTail === undefined;
  }

  private isIdle(): boolean {
    return !this.running && this.arriving === 0 && this.waiting.length === 0 && this.timer === undefined;
  }

  private arrive(item: ActorItem): void {
    this.lastArrivalAt = item.admittedAt;
    if (!this.running && this.waiting.length === 0 && this.timer === undefined) {
      this.start([item]);
      return;
    }
    const { settings } = item;
    if (settings.mode === "interrupt" && this.running) {
      this.running.controller.abort(
        new SessiondError("TURN_INTERRUPTED", `the turn on ${this.key} was interrupted by a newer message`),
      );
    }
    if (this.waiting.length >= settings.cap && !this.makeRoom(item)) return;
    this.waiting.push(item);
    for (const wake of [...this.woken]) wake();
    const { signal } = item;
    if (signal) {
      const onAbort = () => this.cancel(item.id);
      signal.addEventListener("abort", onAbort, { once: true });
      this.releases.set(item.id, () => signal.removeEventListener("abort", onAbort));
    }
    if (!this.running) this.arm(settings.debounceMs);
  }

  /** A full FIFO by the newcomer's drop policy; false when the newcomer itself is refused. */
  private makeRoom(item: ActorItem): boolean {
    const { key } = this;
    const { drop, cap } = item.settings;
    if (drop === "new") {
      item.settle({
        error: new SessiondError(
          "SESSION_BUSY",
          `session ${JSON.stringify(key)} already has ${cap} turns queued`,
          {
            details: { key, queued: this.waiting.length, cap },
          },
        ),
      });
      return false;
    }
    const gone = this.waiting.splice(0, this.waiting.length - cap + 1);
    for (const old of gone) {
      this.release(old);
      old.settle({
        error: new SessiondError(
          "QUEUE_DROPPED",
          `the queue of ${key} was full (${cap}): this message was dropped` +
            (drop === "summarize" ? " and summarised into the session" : " and noted in the session"),
          { details: { key, cap, drop } },
        ),
      });
    }
    const texts = gone.map((old) => old.envelope.text);
    if (drop === "summarize") {
      this.summarized.push(...texts);
      this.summaryRoute = item.route;
    } else void this.deps.dropped(item.route, texts);
    return true;
  }

  /** Starts the next batch once `debounceMs` passed since the last arrival. */
  private arm(debounceMs: number): void {
    if (this.timer !== undefined) this.deps.timer.clearTimeout(this.timer);
    this.timer = undefined;
    const wait = Math.max(0, this.lastArrivalAt + debounceMs - this.deps.now());
    if (wait === 0) {
      this.startNext();
      return;
    }
    this.timer = this.deps.timer.setTimeout(() => {
      this.timer = undefined;
      this.startNext();
    }, wait);
  }

  private startNext(): void {
    if (this.running || this.waiting.length === 0) return;
    const newest = this.waiting.at(-1) as ActorItem;
    const together = newest.settings.mode === "collect" || newest.settings.mode === "interrupt";
    this.start(together ? this.waiting.splice(0) : this.waiting.splice(0, 1));
  }

  /** Runs `items` as one turn in the lane; the next batch is armed once its reply is out. */
  private start(items: ActorItem[]): void {
    const last = items.at(-1) as ActorItem;
    this.lastArrivalAt = Math.max(this.lastArrivalAt, last.admittedAt);
    for (const item of items) this.release(item);
    const controller = new AbortController();
    const unfollow = followSignal(controller, last.signal);
    const summarized = this.summarized.splice(0);
    const batch: ActorBatch = {
      route: last.route,
      items,
      context: items.slice(0, -1).map((item) => item.envelope),
      ...(summarized.length > 0 ? { summary: summaryOf(summarized) } : {}),
      input: last.envelope,
      run: last.run,
      controller,
      signal: controller.signal,
      steering: this.steeringOf(items),
    };
    const running = { controller, batch };
    this.running = running;
    const replied = (outcome: TurnOutcome) => {
      for (const item of batch.items) item.settle(outcome);
      if (this.running !== running) return;
      unfollow();
      this.running = undefined;
      const newest = this.waiting.at(-1);
      if (newest) this.arm(newest.settings.debounceMs);
    };
    this.exclusive(async () => {
      let done: TurnDone;
      try {
        done = await this.deps.turn(batch);
      } catch (error) {
        replied({ error });
        return;
      }
      replied({ result: done.result });
      // The reply is out; still in the lane, so the next turn on the key runs on the compacted context.
      await done.after?.();
    }).catch((error: unknown) => replied({ error }));
  }

  /**
   * While `items` run, the steer inputs at the head of the FIFO can join them: they leave it, run with
   * the turn, and settle with its result. Inputs behind a followup one stay put, so arrival order holds.
   */
  private steeringOf(items: ActorItem[]): SteerSource {
    const steerable = (accept: (envelope: Envelope) => boolean): number => {
      if (this.running?.batch.items !== items) return 0;
      let n = 0;
      for (const item of this.waiting) {
        if (item.settings.mode !== "steer" || !accept(item.envelope)) break;
        n++;
      }
      return n;
    };
    return {
      pending: (accept) => steerable(accept) > 0,
      take: (accept) => {
        const taken = this.waiting.splice(0, steerable(accept));
        for (const item of taken) {
          this.release(item);
          items.push(item);
        }
        return taken;
      },
      wait: (accept, signal) =>
        new Promise<boolean>((resolve) => {
          const check = () => {
            const ready = steerable(accept) > 0;
            if (!ready && !signal.aborted) return;
            this.woken.delete(check);
            signal.removeEventListener("abort", check);
            resolve(ready);
          };
          this.woken.add(check);
          signal.addEventListener("abort", check, { once: true });
          check();
        }),
    };
  }

  private release(item: ActorItem): void {
    const release = this.releases.get(item.id);
    if (!release) return;
    this.releases.delete(item.id);
    release();
  }

  private forgetIfIdle(): void {
    if (this.running || this.arriving > 0 || this.waiting.length > 0) return;
    if (this.lane.size > 0 || this.admissionTail) return;
    const route = this.summaryRoute;
    if (this.summarized.length > 0 && route) {
      // No turn is left to carry the summary (its inputs were cancelled): it is noted in the session.
      const texts = this.summarized.splice(0);
      void this.exclusive(() => this.deps.dropped(route, texts)).catch(() => {});
      return;
    }
    if (this.timer !== undefined) this.deps.timer.clearTimeout(this.timer);
    this.timer = undefined;
    this.deps.idle(this);
  }
}

/** The one entry that stands for inputs dropped from a full queue. */
export function summaryOf(texts: string[]): string {
  const quoted = texts.map((t) =>
    JSON.stringify(t.length > PREVIEW_CHARS ? `${t.slice(0, PREVIEW_CHARS)}…` : t),
  );
  const n = texts.length;
  return `[${n} queued ${n === 1 ? "message" : "messages"} dropped while the queue was full: ${quoted.join("; ")}]`;
}

export function cancelled(key: string): SessiondError {
  return new SessiondError("TURN_CANCELLED", `the queued turn on ${key} was cancelled`);
}
