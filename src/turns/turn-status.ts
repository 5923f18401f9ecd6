import { LRUCache } from "lru-cache";
import { isSessiondError } from "../model/errors.js";
import type { InboxItem, InboxState } from "../model/inbox.js";
import { stateOfError } from "./admission.js";
import type { TurnProgress, TurnResult } from "./turn.js";

export const TURN_STATES = ["queued", "running", "done", "failed", "interrupted", "cancelled"] as const;
export type TurnState = (typeof TURN_STATES)[number];

/** Where one turn is (`engine.turnStatus`, `GET /api/turns/{id}`). */
export interface TurnStatus {
  id: string;
  key: string;
  state: TurnState;
  /** Engine-clock milliseconds. */
  admittedAt: number;
  startedAt?: number;
  finishedAt?: number;
  /** The session (generation) id it ran in, once done. */
  sessionId?: string;
  /** The stored reply (null when the turn stored none, e.g. a bare `/new`). */
  reply?: string | null;
  replyId?: string;
  notice?: string;
  /** Why it failed, was interrupted or cancelled. */
  error?: { code: string; message: string };
}

/** A running turn as `GET /api/inspect` reports it: stuck when its runtime has been quiet too long. */
export interface RunningTurn {
  id: string;
  key: string;
  startedAt: number;
  /** The runtime's last event (the start when it sent none yet). */
  lastEventAt: number;
  /** Runtime events so far. */
  events: number;
  stuck: boolean;
}

export const DEFAULT_STUCK_AFTER_MS = 120_000;

/** A finished turn's result was dropped from memory to keep within `turns.resultsMaxBytes`. */
export interface EvictedTurn {
  id: string;
  state: "evicted";
}

/** Ids of evicted results remembered, so that a late caller hears "evicted" rather than "unknown". */
const EVICTED_IDS = 10_000;
export const DEFAULT_RESULTS_MAX_BYTES = 8 * 1024 * 1024;

/**
 * Every turn's state: those queued or running in a map (bounded by the queues' caps), finished ones in an
 * LRU bounded by bytes (their JSON), then only their ids, so an evicted result says so.
 */
export class TurnStatuses {
  private readonly live = new Map<string, TurnStatus>();
  /** The progress of each running turn's runtime, by turn id. */
  private readonly progress = new Map<string, TurnProgress>();
  private readonly finished: LRUCache<string, TurnStatus>;
  private readonly evicted = new LRUCache<string, true>({ max: EVICTED_IDS });

  constructor(
    private readonly now: () => number,
    maxBytes = DEFAULT_RESULTS_MAX_BYTES,
  ) {
    this.finished = new LRUCache<string, TurnStatus>({
      maxSize: Math.max(1, maxBytes),
      sizeCalculation: statusBytes,
      dispose: (_status, id, reason) => {
        if (reason === "evict") this.evicted.set(id, true);
      },
    });
  }

  queued(id: string, key: string): void {
    this.live.set(id, { id, key, state: "queued", admittedAt: this.now() });
  }

  running(id: string): void {
    const status = this.live.get(id);
    if (status) Object.assign(status, { state: "running", startedAt: this.now() });
  }

  /** The runtime of running turn `id` reports its events here. */
  watch(id: string, progress: TurnProgress): void {
    if (this.live.has(id)) this.progress.set(id, progress);
  }

  settle(id: string, outcome: { result: TurnResult } | { error: unknown }): void {
    const status = this.live.get(id);
    if (!status) return;
    this.live.delete(id);
    this.progress.delete(id);
    const ended: TurnStatus = { ...status, finishedAt: this.now(), ...endOf(outcome) };
    this.finished.set(id, ended);
    // One result bigger than the whole budget is never kept.
    if (!this.finished.has(id)) this.evicted.set(id, true);
  }

  /** The turns running now, oldest first; stuck when their runtime sent no event for `stuckAfterMs`. */
  runningTurns(stuckAfterMs: number): RunningTurn[] {
    const now = this.now();
    const running: RunningTurn[] = [];
    for (const status of this.live.values()) {
      if (status.state !== "running") continue;
      const startedAt = status.startedAt ?? status.admittedAt;
      const progress = this.progress.get(status.id);
      const lastEventAt = progress ? Math.max(progress.lastEventAt, startedAt) : startedAt;
      running.push({
        id: status.id,
        key: status.key,
        startedAt,
        lastEventAt,
        events: progress?.events ?? 0,
        stuck: now - lastEventAt >= stuckAfterMs,
      });
    }
    return running;
  }

  get(id: string): TurnStatus | EvictedTurn | undefined {
    const status = this.live.get(id) ?? this.finished.get(id);
    if (status) return { ...status };
    return this.evicted.has(id) ? { id, state: "evicted" } : undefined;
  }
}

/**
 * What a status holds in memory, roughly: its strings at two bytes a character (UTF-16, the most a JS
 * string takes) and a fixed share for the object and its numbers. Cheaper than its JSON, on every turn.
 */
export function statusBytes(status: TurnStatus): number {
  let chars = status.id.length + status.key.length;
  if (status.sessionId) chars += status.sessionId.length;
  if (typeof status.reply === "string") chars += status.reply.length;
  if (status.replyId) chars += status.replyId.length;
  if (status.notice) chars += status.notice.length;
  if (status.error) chars += status.error.code.length + status.error.message.length;
  return STATUS_OVERHEAD_BYTES + 2 * chars;
}

const STATUS_OVERHEAD_BYTES = 256;

function endOf(outcome: { result: TurnResult } | { error: unknown }): Partial<TurnStatus> {
  if ("result" in outcome) {
    const { result } = outcome;
    return {
      state: "done",
      sessionId: result.sessionId,
      reply: result.reply?.content ?? null,
      ...(result.reply ? { replyId: result.reply.id } : {}),
      ...(result.notice ? { notice: result.notice } : {}),
    };
  }
  const { error } = outcome;
  const code = isSessiondError(error) ? error.code : "TURN_FAILED";
  const message = error instanceof Error ? error.message : String(error);
  return { state: turnStateOf(stateOfError(code)), error: { code, message } };
}

/** The inbox's states as a turn's: waiting is `queued`, dropped from a full queue is `cancelled`. */
function turnStateOf(state: InboxState): TurnState {
  if (state === "pending") return "queued";
  return state === "dropped" ? "cancelled" : state;
}

/** An inbox item as a turn status: what a turn admitted before a restart reports. */
export function statusOfItem(item: InboxItem): TurnStatus {
  const state = turnStateOf(item.state);
  const { outcome } = item;
  return {
    id: item.id,
    key: item.key,
    state,
    admittedAt: item.admittedAt,
    ...(state === "queued" || state === "running" ? {} : { finishedAt: item.updatedAt }),
    ...(outcome?.sessionId ? { sessionId: outcome.sessionId } : {}),
    ...(outcome?.replyId ? { replyId: outcome.replyId } : {}),
    ...(outcome?.notice ? { notice: outcome.notice } : {}),
    ...(outcome?.error ? { error: outcome.error } : {}),
  };
}
