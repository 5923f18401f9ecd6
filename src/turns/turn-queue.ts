import type { Route } from "../keys/index.js";
import type { TimerHandle } from "../lifecycle/clock.js";
import type { Envelope } from "../model/envelope.js";
import { SessiondError } from "../model/errors.js";
import { newId } from "../model/ids.js";
import { DEFAULT_QUEUE, type QueueSettings } from "../model/queue.js";
import { followSignal } from "./follow-signal.js";
import type { Batch, BatchSteering, QueuedInput, TurnQueueDeps } from "./queue-types.js";
import type { TurnResult, TurnRunner } from "./turn.js";

export type { Batch, BatchSteering, QueuedInput, SteerInput, TurnQueueDeps } from "./queue-types.js";

interface Item {
  id: string;
  route: Route;
  envelope: Envelope;
  run: TurnRunner;
  signal: AbortSignal | undefined;
  settings: QueueSettings;
  admittedAt: number;
  resolve(result: TurnResult): void;
  reject(error: unknown): void;
  /** Removes the caller-signal listener. */
  release(): void;
}

interface KeyQueue {
  running: { controller: AbortController; ids: string[] } | undefined;
  waiting: Item[];
  /** Texts dropped by `summarize`, folded into one entry before the next turn. */
  summarized: string[];
  timer: TimerHandle | undefined;
  lastArrivalAt: number;
  /** Arrivals are handled one at a time, in order, while their settings are read. */
  arrivals: Promise<void>;
  /** Submitted, not yet arrived: the key's queue is kept while any are. */
  arriving: number;
  /** Called after each input joins `waiting`: a running turn's `steering.wait`. */
  woken: Set<() => void>;
}

const PREVIEW_CHARS = 80;

/**
 * The turns of each key, by queue mode: one runs, the rest wait here (bounded per key by the cap and its
 * drop policy, never silently), and start after the debounce as one turn each (`followup`, `steer`) or
 * all together (`collect`, `interrupt`); a running turn may take the `steer` ones at a tool boundary
 * (`Batch.steering`). An idle key costs nothing.
 */
export class TurnQueue {
  private readonly keys = new Map<string, KeyQueue>();
  private idle: Array<() => void> = [];

  constructor(private readonly deps: TurnQueueDeps) {}

  /** Queues one input; `id` names it (its admission id) instead of a new one. */
  submit(
    route: Route,
    envelope: Envelope,
    run: TurnRunner,
    signal?: AbortSignal,
    id?: string,
  ): Promise<TurnResult> {
    const queue = this.queueOf(route.key);
    if (this.idleQueue(queue)) {
      // An idle key starts at once, in the caller's tick: it takes the lane before any later lane work.
      return new Promise<TurnResult>((resolve, reject) => {
        const item = this.itemOf(route, envelope, run, signal, DEFAULT_QUEUE, resolve, reject, id);
        if (signal?.aborted) reject(cancelled(route.key));
        else this.start(queue, [item]);
        if (signal?.aborted) this.forgetIfIdle(route.key, queue);
      });
    }
    queue.arriving++;
    return new Promise<TurnResult>((resolve, reject) => {
      queue.arrivals = queue.arrivals.then(async () => {
        let settings: QueueSettings;
        try {
          if (signal?.aborted) throw cancelled(route.key);
          settings = await this.deps.settings(route);
        } catch (error) {
          queue.arriving--;
          reject(error);
          this.forgetIfIdle(route.key, queue);
          return;
        }
        queue.arriving--;
        const item = this.itemOf(route, envelope, run, signal, settings, resolve, reject, id);
        this.arrive(queue, item);
      });
    });
  }

  /** Resolves when no key has a turn running or waiting (debounced batches still start first). */
  async drain(): Promise<void> {
    while (this.keys.size > 0) await new Promise<void>((resolve) => this.idle.push(resolve));
  }

  /** Every input waiting, oldest first per key. */
  list(): QueuedInput[] {
    return [...this.keys.values()].flatMap((queue) => queue.waiting.map(view));
  }

  /** Turns running or waiting, per busy key. */
  depths(): Map<string, number> {
    const depths = new Map<string, number>();
    for (const [key, queue] of this.keys) {
      const n = queue.waiting.length + (queue.running ? 1 : 0);
      if (n > 0) depths.set(key, n);
    }
    return depths;
  }

  /** Cancels a waiting input (its caller gets TURN_CANCELLED); false when none has that id. */
  cancel(id: string): boolean {
    for (const [key, queue] of this.keys) {
      const at = queue.waiting.findIndex((item) => item.id === id);
      if (at < 0) continue;
      const [item] = queue.waiting.splice(at, 1);
      item?.release();
      item?.reject(cancelled(key));
      this.forgetIfIdle(key, queue);
      return true;
    }
    return false;
  }

  /** Aborts the running turn that has this input, with `reason`; false when none is running it. */
  abort(id: string, reason: Error): boolean {
    for (const queue of this.keys.values()) {
      if (!queue.running?.ids.includes(id)) continue;
      queue.running.controller.abort(reason);
      return true;
    }
    return false;
  }

  private idleQueue(queue: KeyQueue): boolean {
    return !queue.running && queue.arriving === 0 && queue.waiting.length === 0 && queue.timer === undefined;
  }

  private itemOf(
    route: Route,
    envelope: Envelope,
    run: TurnRunner,
    signal: AbortSignal | undefined,
    settings: QueueSettings,
    resolve: (result: TurnResult) => void,
    reject: (error: unknown) => void,
    id: string | undefined,
  ): Item {
    const admittedAt = this.deps.now();
    return {
      id: id ?? newId(admittedAt),
      route,
      envelope,
      run,
      signal,
      settings,
      admittedAt,
      resolve,
      reject,
      release: () => {},
    };
  }

  private arrive(queue: KeyQueue, item: Item): void {
    queue.lastArrivalAt = item.admittedAt;
    if (!queue.running && queue.waiting.length === 0 && queue.timer === undefined) {
      this.start(queue, [item]);
      return;
    }
    const { settings } = item;
    if (settings.mode === "interrupt" && queue.running) {
      queue.running.controller.abort(
        new SessiondError(
          "TURN_INTERRUPTED",
          `the turn on ${item.route.key} was interrupted by a newer message`,
        ),
      );
    }
    if (queue.waiting.length >= settings.cap && !this.makeRoom(queue, item)) return;
    queue.waiting.push(item);
    if (queue.woken.size > 0) for (const wake of [...queue.woken]) wake();
    if (item.signal) {
      const signal = item.signal;
      const onAbort = () => this.cancel(item.id);
      signal.addEventListener("abort", onAbort, { once: true });
      item.release = () => signal.removeEventListener("abort", onAbort);
    }
    if (!queue.running) this.arm(queue, settings.debounceMs);
  }

  /** A full queue by the newcomer's drop policy; false when the newcomer itself is refused. */
  private makeRoom(queue: KeyQueue, item: Item): boolean {
    const { key } = item.route;
    const { drop, cap } = item.settings;
    if (drop === "new") {
      item.reject(
        new SessiondError("SESSION_BUSY", `session ${JSON.stringify(key)} already has ${cap} turns queued`, {
          details: { key, queued: queue.waiting.length, cap },
        }),
      );
      return false;
    }
    const gone = queue.waiting.splice(0, queue.waiting.length - cap + 1);
    for (const old of gone) {
      old.release();
      old.reject(
        new SessiondError(
          "QUEUE_DROPPED",
          `the queue of ${key} was full (${cap}): this message was dropped` +
            (drop === "summarize" ? " and summarised into the session" : " and noted in the session"),
          { details: { key, cap, drop } },
        ),
      );
    }
    const texts = gone.map((old) => old.envelope.text);
    if (drop === "summarize") queue.summarized.push(...texts);
    else void this.deps.dropped(item.route, texts);
    return true;
  }

  /** Starts the next batch once `debounceMs` passed since the last arrival. */
  private arm(queue: KeyQueue, debounceMs: number): void {
    if (queue.timer !== undefined) this.deps.timer.clearTimeout(queue.timer);
    queue.timer = undefined;
    const wait = Math.max(0, queue.lastArrivalAt + debounceMs - this.deps.now());
    if (wait === 0) {
      this.startNext(queue);
      return;
    }
    queue.timer = this.deps.timer.setTimeout(() => {
      queue.timer = undefined;
      this.startNext(queue);
    }, wait);
  }

  private startNext(queue: KeyQueue): void {
    if (queue.running || queue.waiting.length === 0) return;
    const newest = queue.waiting.at(-1) as Item;
    const together = newest.settings.mode === "collect" || newest.settings.mode === "interrupt";
    const batch = together ? queue.waiting.splice(0) : queue.waiting.splice(0, 1);
    this.start(queue, batch);
  }

  private start(queue: KeyQueue, batch: Item[]): void {
    const last = batch.at(-1) as Item;
    queue.lastArrivalAt = Math.max(queue.lastArrivalAt, last.admittedAt);
    for (const item of batch) item.release();
    const controller = new AbortController();
    queue.running = { controller, ids: batch.map((item) => item.id) };
    const unfollow = followSignal(controller, last.signal);
    const signal = controller.signal;
    const summarized = queue.summarized.splice(0);
    const batchRun: Batch = {
      route: last.route,
      context: batch.slice(0, -1).map((item) => item.envelope),
      ...(summarized.length > 0 ? { summary: summaryOf(summarized) } : {}),
      input: last.envelope,
      ids: batch.map((item) => item.id),
      run: last.run,
      signal,
      steering: this.steeringOf(queue, batch),
    };
    void this.deps
      .execute(batchRun)
      .then(
        (result) => {
          for (const item of batch) item.resolve(result);
        },
        (error: unknown) => {
          for (const item of batch) item.reject(error);
        },
      )
      .finally(() => {
        unfollow();
        queue.running = undefined;
        const newest = queue.waiting.at(-1);
        if (newest) this.arm(queue, newest.settings.debounceMs);
        else this.forgetIfIdle(last.route.key, queue);
      });
  }

  /**
   * While `batch` runs, the steer inputs at the head of the queue can join it: they leave the queue, run
   * with it, and settle with its result. Inputs behind a followup one stay put, so arrival order holds.
   */
  private steeringOf(queue: KeyQueue, batch: Item[]): BatchSteering {
    const steerable = (accept: (envelope: Envelope) => boolean): number => {
      const running = queue.running;
      if (!running || batch[0]?.id !== running.ids[0]) return 0;
      let n = 0;
      for (const item of queue.waiting) {
        if (item.settings.mode !== "steer" || !accept(item.envelope)) break;
        n++;
      }
      return n;
    };
    return {
      pending: (accept) => steerable(accept) > 0,
      take: (accept) => {
        const taken = queue.waiting.splice(0, steerable(accept));
        for (const item of taken) {
          item.release();
          batch.push(item);
          queue.running?.ids.push(item.id);
        }
        return taken.map((item) => ({ id: item.id, envelope: item.envelope }));
      },
      wait: (accept, signal) =>
        new Promise<boolean>((resolve) => {
          const check = () => {
            const ready = steerable(accept) > 0;
            if (!ready && !signal.aborted) return;
            queue.woken.delete(check);
            signal.removeEventListener("abort", check);
            resolve(ready);
          };
          queue.woken.add(check);
          signal.addEventListener("abort", check, { once: true });
          check();
        }),
    };
  }

  private queueOf(key: string): KeyQueue {
    let queue = this.keys.get(key);
    if (!queue) {
      queue = {
        running: undefined,
        waiting: [],
        summarized: [],
        timer: undefined,
        lastArrivalAt: 0,
        arrivals: Promise.resolve(),
        arriving: 0,
        woken: new Set(),
      };
      this.keys.set(key, queue);
    }
    return queue;
  }

  private forgetIfIdle(key: string, queue: KeyQueue): void {
    if (queue.running || queue.arriving > 0 || queue.waiting.length > 0 || queue.summarized.length > 0)
      return;
    if (queue.timer !== undefined) this.deps.timer.clearTimeout(queue.timer);
    if (this.keys.get(key) === queue) this.keys.delete(key);
    if (this.keys.size === 0) for (const resolve of this.idle.splice(0)) resolve();
  }
}

function view(item: Item): QueuedInput {
  return {
    id: item.id,
    key: item.route.key,
    agent: item.route.agent,
    preview: item.envelope.text.slice(0, PREVIEW_CHARS),
    mode: item.settings.mode,
    admittedAt: item.admittedAt,
  };
}

/** The one entry that stands for inputs dropped from a full queue. */
export function summaryOf(texts: string[]): string {
  const quoted = texts.map((t) =>
    JSON.stringify(t.length > PREVIEW_CHARS ? `${t.slice(0, PREVIEW_CHARS)}…` : t),
  );
  const n = texts.length;
  return `[${n} queued ${n === 1 ? "message" : "messages"} dropped while the queue was full: ${quoted.join("; ")}]`;
}

function cancelled(key: string): SessiondError {
  return new SessiondError("TURN_CANCELLED", `the queued turn on ${key} was cancelled`);
}
