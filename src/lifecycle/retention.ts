import { isSessiondError, SessiondError } from "../model/errors.js";
import type { Session } from "../model/session.js";
import type { SessionScan, Store } from "../store/store.js";
import { direct, type InLanes } from "./in-lanes.js";

/**
 * What is deleted by age; nothing else ever is (GoClaw: "sessions are not deleted by age"). A value of 0
 * (or Infinity) turns that part off.
 */
export interface RetentionPolicy {
  /** Days without activity after which single-event webhook sessions go (default 7). */
  webhookIdleDays: number;
  /** Days after archiving after which an archived generation goes; undefined (default): kept forever. */
  archivedRetentionDays?: number;
}

export const DEFAULT_RETENTION: Readonly<RetentionPolicy> = Object.freeze({ webhookIdleDays: 7 });

export type RetentionReason = "webhook-idle" | "archived-expired";

export interface RetentionItem {
  key: string;
  /** `key`: every generation of the key goes (`store.delete`); `generation`: only `sessionId`. */
  scope: "key" | "generation";
  /** The generation found by the scan: the current one for `key`, the archived one for `generation`. */
  sessionId: string;
  reason: RetentionReason;
  lastActivityAt: number;
  archivedAt?: number;
}

export interface RetentionPlan {
  now: number;
  /** Webhook sessions last active at or before this go; absent when that part is off. */
  webhookCutoff?: number;
  /** Archived generations archived at or before this go; absent when that part is off. */
  archivedCutoff?: number;
  /** Oldest first within each part: webhook sessions, then their archived generations, then the rest. */
  sessions: RetentionItem[];
  /** True when `limit` cut the plan short: apply it and plan again for the rest. */
  truncated: boolean;
}

export interface RetentionResult {
  /** Items applied: whole keys, and single generations. */
  keys: number;
  generations: number;
  /** What the store deleted. */
  sessions: number;
  entries: number;
  /** Items left alone: gone already, or the key had activity after the plan was made. */
  skipped: number;
}

export interface PlanRetentionOptions {
  /** The most items in one plan (default: no limit). */
  limit?: number;
  /** Sessions per scan page, 1..10,000 (default 1,000). */
  pageSize?: number;
}

const DAY = 86_400_000;
const APPLY_BATCH = 256;

/** Single-event webhook keys per prefix: the last segment starts with one of these. */
const SINGLE_EVENT: ReadonlyArray<readonly [prefix: string, markers: readonly string[]]> = [
  ["webhook:", ["ts-"]],
  ["webhook-sop:", ["ts-", "batch-"]],
];

/**
 * Whether the key is a webhook session made for a single event: `webhook:<agent>:<type>:ts-…`, or an
 * SOP-run log `webhook-sop:…:ts-…` / `webhook-sop:…:batch-…`. Webhook sessions about an entity
 * (`webhook:<agent>:<type>:<entity>`) are not.
 */
export function isSingleEventWebhookKey(key: string): boolean {
  const last = key.slice(key.lastIndexOf(":") + 1);
  return SINGLE_EVENT.some(
    ([prefix, markers]) => key.startsWith(prefix) && markers.some((m) => last.startsWith(m)),
  );
}

function cutoff(now: number, days: number | undefined, field: string): number | undefined {
  if (days === undefined) return undefined;
  if (typeof days !== "number" || Number.isNaN(days) || days < 0) {
    throw new SessiondError("INVALID_ARGUMENT", `${field} must be a non-negative number of days`, {
      details: { field, days },
    });
  }
  if (days === 0 || days === Number.POSITIVE_INFINITY) return undefined;
  return now - days * DAY;
}

/** Every session the scan matches, page by page, while `take` returns true. */
async function scanAll(store: Store, scan: SessionScan, take: (session: Session) => boolean): Promise<void> {
  let after: SessionScan["after"];
  for (;;) {
    const page = await store.scanSessions({ ...scan, ...(after ? { after } : {}) });
    for (const session of page) if (!take(session)) return;
    const last = page[page.length - 1];
    if (last === undefined || page.length < (scan.limit ?? 1000)) return;
    after = {
      time: last.state === "archived" ? (last.archivedAt ?? 0) : last.lastActivityAt,
      id: last.id,
    };
  }
}

/**
 * What retention would delete at `now`, without deleting anything: a dry run is this alone. Index-backed
 * scans (`scanSessions`), so the cost follows what is old enough, not the size of the store.
 */
export async function planRetention(
  store: Store,
  policy: RetentionPolicy,
  now: number,
  options: PlanRetentionOptions = {},
): Promise<RetentionPlan> {
  const webhookCutoff = cutoff(now, policy.webhookIdleDays, "webhook_idle_days");
  const archivedCutoff = cutoff(now, policy.archivedRetentionDays, "archived_days");
  const limit = options.limit ?? Number.POSITIVE_INFINITY;
  const pageSize = options.pageSize ?? 1000;
  const plan: RetentionPlan = { now, sessions: [], truncated: false };
  if (webhookCutoff !== undefined) plan.webhookCutoff = webhookCutoff;
  if (archivedCutoff !== undefined) plan.archivedCutoff = archivedCutoff;

  const wholeKeys = new Set<string>();
  const listed = new Set<string>();
  const add = (item: RetentionItem): boolean => {
    if (plan.sessions.length >= limit) {
      plan.truncated = true;
      return false;
    }
    plan.sessions.push(item);
    listed.add(item.sessionId);
    if (item.scope === "key") wholeKeys.add(item.key);
    return true;
  };
  const generation = (session: Session, reason: RetentionReason): RetentionItem => {
    const item: RetentionItem = {
      key: session.key,
      scope: "generation",
      sessionId: session.id,
      reason,
      lastActivityAt: session.lastActivityAt,
    };
    if (session.archivedAt !== undefined) item.archivedAt = session.archivedAt;
    return item;
  };

  if (webhookCutoff !== undefined) {
    // Scans take an exclusive bound; exactly `days` without activity counts as expired.
    for (const [keyPrefix] of SINGLE_EVENT) {
      if (plan.truncated) break;
      await scanAll(
        store,
        { state: "active", keyPrefix, inactiveBefore: webhookCutoff + 1, limit: pageSize },
        (s) =>
          !isSingleEventWebhookKey(s.key) ||
          add({
            key: s.key,
            scope: "key",
            sessionId: s.id,
            reason: "webhook-idle",
            lastActivityAt: s.lastActivityAt,
          }),
      );
    }
    // Generations a scheduled reset archived (the key may have no current session left).
    for (const [keyPrefix] of SINGLE_EVENT) {
      if (plan.truncated) break;
      await scanAll(
        store,
        { state: "archived", keyPrefix, archivedBefore: webhookCutoff + 1, limit: pageSize },
        (s) => !isSingleEventWebhookKey(s.key) || wholeKeys.has(s.key) || add(generation(s, "webhook-idle")),
      );
    }
  }
  if (archivedCutoff !== undefined && !plan.truncated) {
    await scanAll(
      store,
      { state: "archived", archivedBefore: archivedCutoff + 1, limit: pageSize },
      (s) => wholeKeys.has(s.key) || listed.has(s.id) || add(generation(s, "archived-expired")),
    );
  }
  return plan;
}

/**
 * Deletes what the plan lists: `store.delete(key)` for whole webhook keys, `store.deleteGeneration(id)`
 * for archived generations. A key that had activity after the plan was made is left alone.
 */
export async function applyRetention(
  store: Store,
  plan: RetentionPlan,
  inLanes: InLanes = direct,
): Promise<RetentionResult> {
  const result: RetentionResult = { keys: 0, generations: 0, sessions: 0, entries: 0, skipped: 0 };
  const applyOne = (item: RetentionItem): Promise<void> =>
    inLanes([item.key], () => applyInLane(item)).catch((error: unknown) => {
      // A key with turns queued is not idle, and a history others are forked from is theirs too: both
      // are left for a later run.
      if (!isSessiondError(error, "SESSION_BUSY") && !isSessiondError(error, "SESSION_HAS_FORKS"))
        throw error;
      result.skipped += 1;
    });
  const applyInLane = async (item: RetentionItem): Promise<void> => {
    if (item.scope === "key") {
      const current = await store.getSession(item.key);
      if (current !== undefined && current.lastActivityAt > item.lastActivityAt) {
        result.skipped += 1;
        return;
      }
      const deleted = await store.delete(item.key);
      if (deleted.sessions === 0) result.skipped += 1;
      else result.keys += 1;
      result.sessions += deleted.sessions;
      result.entries += deleted.entries;
      return;
    }
    try {
      const deleted = await store.deleteGeneration(item.sessionId);
      if (deleted.sessions === 0) result.skipped += 1;
      else result.generations += 1;
      result.sessions += deleted.sessions;
      result.entries += deleted.entries;
    } catch (error) {
      // Only a current session is refused; an archived generation never becomes current again.
      if (!isSessiondError(error, "INVALID_ARGUMENT")) throw error;
      result.skipped += 1;
    }
  };
  for (let i = 0; i < plan.sessions.length; i += APPLY_BATCH) {
    const outcomes = await Promise.allSettled(plan.sessions.slice(i, i + APPLY_BATCH).map(applyOne));
    const failed = outcomes.find((o): o is PromiseRejectedResult => o.status === "rejected");
    if (failed) throw failed.reason;
  }
  return result;
}
