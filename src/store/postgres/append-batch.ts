import type { PoolClient } from "pg";
import type { Entry, EntryInput } from "../../model/entry.js";
import { SessiondError } from "../../model/errors.js";
import type { Session, SessionInit } from "../../model/session.js";
import type { Fence } from "../fence.js";
import { cloneSession, newSession, planAppend } from "../session-log.js";
import { requireInit } from "../session-patch.js";
import type { AppendResult } from "../store.js";
import { appendedNotices } from "./append-notify.js";
import { findIdempotent, insertSessions, lastGenerations, lockCurrent, writeAppends } from "./sql.js";
import type { OpResult } from "./writer.js";

export interface AppendRequest {
  key: string;
  inputs: EntryInput[];
  init: SessionInit | undefined;
  expectSessionId: string | undefined;
  fence: Fence | undefined;
}

interface KeyState {
  session: Session | undefined;
  sid: number | undefined;
  /** Entries of this batch by idempotency key, and the stored ones found for it. */
  idempotent: Map<string, Entry>;
  touched: boolean;
  /** The key had no current session: the batch inserts the one it starts. */
  isNew: boolean;
}

/**
 * Commits a batch of appends in the open transaction: the keys' current sessions are read and locked
 * (so another process appending to one waits for this commit, and seq stays gap-free across processes),
 * each request is planned by the shared log rules, then every new session, entry and session update is
 * one `INSERT … SELECT FROM unnest(…)` or `UPDATE … FROM unnest(…)` statement for the whole batch.
 * A request that fails its own checks (SESSION_CHANGED, LEASE_LOST, a bad entry) fails alone.
 */
export async function commitAppends(
  client: PoolClient,
  requests: AppendRequest[],
  now: number,
  /** This store's id in the NOTIFY it sends (so it can skip its own). */
  notifier: string,
): Promise<OpResult[]> {
  const keys = [...new Set(requests.map((r) => r.key))].sort();
  const locked = await lockCurrent(client, keys);
  const fenced = await liveFences(client, requests);
  const state = new Map<string, KeyState>();
  const sessionsBySid = new Map<number, string>();
  for (const key of keys) {
    const current = locked.get(key);
    state.set(key, {
      session: current?.session,
      sid: current?.sid,
      idempotent: new Map(),
      touched: false,
      isNew: !current,
    });
    if (current) sessionsBySid.set(current.sid, current.session.id);
  }
  const pairs: Array<{ sid: number; key: string }> = [];
  for (const r of requests) {
    const sid = state.get(r.key)?.sid;
    if (sid === undefined) continue;
    for (const input of r.inputs)
      if (input.idempotencyKey !== undefined) pairs.push({ sid, key: input.idempotencyKey });
  }
  const stored = await findIdempotent(client, sessionsBySid, pairs);
  const generations = await lastGenerations(
    client,
    keys.filter((k) => !locked.has(k)),
  );

  const results: OpResult[] = [];
  const fresh: Array<{ key: string; entry: Entry }> = [];
  for (const r of requests) {
    const s = state.get(r.key)!;
    try {
      if (r.fence && !fenced.has(`${r.fence.key} ${r.fence.epoch}`)) throw leaseLost(r.fence);
      const session = s.session
        ? cloneSession(s.session)
        : newSession(r.key, requireInit(r.key, r.init), (generations.get(r.key) ?? 0) + 1, now);
      const plan = planAppend(
        session,
        r.inputs,
        {
          findIdempotent: (_s, k) =>
            s.idempotent.get(k) ?? (s.sid === undefined ? undefined : stored.get(`${s.sid} ${k}`)),
        },
        now,
        r.expectSessionId,
      );
      for (const entry of plan.fresh) {
        fresh.push({ key: r.key, entry });
        if (entry.idempotencyKey !== undefined) s.idempotent.set(entry.idempotencyKey, entry);
      }
      s.session = session;
      s.touched = true;
      results.push({
        ok: true,
        value: {
          session: cloneSession(session),
          entries: plan.entries,
          created: plan.created,
        } satisfies AppendResult,
      });
    } catch (error) {
      results.push({ ok: false, error });
    }
  }

  const touched = [...state.values()].filter((s) => s.touched && s.session);
  const newSids = await insertSessions(
    client,
    touched.filter((s) => s.isNew).map((s) => s.session!),
  );
  for (const [key, s] of state) {
    if (s.sid === undefined && s.session) s.sid = newSids.get(s.session.id);
    if (s.sid === undefined && s.touched) throw new Error(`no sid for ${key}`);
  }
  await writeAppends(
    client,
    fresh.map(({ key, entry }) => ({ sid: state.get(key)!.sid!, entry })),
    touched.filter((s) => !s.isNew).map((s) => s.session!),
    appendedNotices(notifier, fresh),
  );
  return results;
}

/**
 * The fences of this batch that still hold, as `${key} ${epoch}`. The lease rows are locked (FOR SHARE)
 * until the commit: a process taking the lease over waits for it, so no append with an old epoch can
 * commit after the take.
 */
async function liveFences(client: PoolClient, requests: AppendRequest[]): Promise<Set<string>> {
  const fences = requests.flatMap((r) => (r.fence ? [r.fence] : []));
  if (fences.length === 0) return new Set();
  const { rows } = await client.query<{ key: string; epoch: number }>(
    `SELECT l.key, l.epoch FROM leases l JOIN unnest($1::text[], $2::bigint[]) AS f(key, epoch)
       ON l.key = f.key AND l.epoch = f.epoch ORDER BY l.key FOR SHARE OF l`,
    [fences.map((f) => f.key), fences.map((f) => f.epoch)],
  );
  return new Set(rows.map((r) => `${r.key} ${r.epoch}`));
}

export function leaseLost(fence: Fence): SessiondError {
  return new SessiondError(
    "LEASE_LOST",
    `the turn's lease on ${JSON.stringify(fence.key)} (epoch ${fence.epoch}) was taken over by another process; nothing of this write was stored`,
    { details: { key: fence.key, epoch: fence.epoch, outcome: "not-written" } },
  );
}
