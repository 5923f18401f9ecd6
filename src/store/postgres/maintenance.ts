import type { PoolClient } from "pg";
import type { ResetCause } from "../../model/entry.js";
import type { Session, SessionInit } from "../../model/session.js";
import {
  cloneSession,
  currentNotDeletable,
  planArchive,
  planRekey,
  planReset,
  sessionNotFound,
} from "../session-log.js";
import { applyPatch } from "../session-patch.js";
import type { SessionRow } from "../sqlite/rows.js";
import { sessionFromRow } from "../sqlite/rows.js";
import type { ArchiveResult, DeleteResult, ResetResult, SessionPatch } from "../store.js";
import { insertEntries, insertSessions, lockCurrent, updateSessions } from "./sql.js";

/**
 * The PostgreSQL store's writes other than appends, each run alone in one transaction by the writer
 * (in submission order with the appends), on sessions read and locked inside it.
 */

async function current(client: PoolClient, key: string): Promise<{ sid: number; session: Session }> {
  const found = (await lockCurrent(client, [key])).get(key);
  if (!found) throw sessionNotFound(key);
  return found;
}

export async function updateSession(client: PoolClient, key: string, patch: SessionPatch): Promise<Session> {
  const { session } = await current(client, key);
  const next = applyPatch(session, patch);
  await client.query("UPDATE sessions SET overrides = $1::jsonb WHERE id = $2", [
    JSON.stringify(next.overrides),
    next.id,
  ]);
  return next;
}

export async function archive(
  client: PoolClient,
  key: string,
  cause: ResetCause,
  now: number,
): Promise<ArchiveResult> {
  const { sid, session } = await current(client, key);
  const archived = cloneSession(session);
  const resetEntry = planArchive(archived, cause, now);
  await insertEntries(client, [{ sid, entry: resetEntry }]);
  await updateSessions(client, [archived]);
  return { archived: cloneSession(archived), resetEntry };
}

export async function reset(
  client: PoolClient,
  key: string,
  cause: ResetCause,
  init: SessionInit | undefined,
  now: number,
): Promise<ResetResult> {
  const { sid, session } = await current(client, key);
  const archived = cloneSession(session);
  const { resetEntry, next } = planReset(archived, cause, init, now);
  await insertEntries(client, [{ sid, entry: resetEntry }]);
  // The archived row first: only one session of a key may be current.
  await updateSessions(client, [archived]);
  await insertSessions(client, [next]);
  return { archived: cloneSession(archived), resetEntry, current: cloneSession(next) };
}

export async function deleteKey(client: PoolClient, key: string): Promise<DeleteResult> {
  const { rows } = await client.query<{ sid: number }>(
    "SELECT sid FROM sessions WHERE key = $1 ORDER BY sid FOR UPDATE",
    [key],
  );
  return deleteSids(
    client,
    rows.map((r) => r.sid),
  );
}

export async function deleteGeneration(client: PoolClient, sessionId: string): Promise<DeleteResult> {
  const { rows } = await client.query<{ sid: number; state: string }>(
    "SELECT sid, state FROM sessions WHERE id = $1 FOR UPDATE",
    [sessionId],
  );
  const row = rows[0];
  if (!row) return { sessions: 0, entries: 0 };
  if (row.state === "active") throw currentNotDeletable(sessionId);
  return deleteSids(client, [row.sid]);
}

async function deleteSids(client: PoolClient, sids: number[]): Promise<DeleteResult> {
  if (sids.length === 0) return { sessions: 0, entries: 0 };
  const entries = await client.query("DELETE FROM entries WHERE sid = ANY($1::bigint[])", [sids]);
  const sessions = await client.query("DELETE FROM sessions WHERE sid = ANY($1::bigint[])", [sids]);
  return { sessions: sessions.rowCount ?? 0, entries: entries.rowCount ?? 0 };
}

export async function rekey(
  client: PoolClient,
  from: string,
  to: string,
  now: number,
): Promise<{ moved: number }> {
  if (from === to) return { moved: 0 };
  const { rows } = await client.query<SessionRow>(
    "SELECT * FROM sessions WHERE key = ANY($1::text[]) ORDER BY sid FOR UPDATE",
    [[from, to]],
  );
  const sessions = rows.map(sessionFromRow);
  const sidOf = new Map(rows.map((r) => [r.id, r.sid]));
  const fromGens = sessions.filter((s) => s.key === from);
  const plan = planRekey(
    fromGens,
    sessions.filter((s) => s.key === to),
    to,
    now,
  );
  if (plan.archived) {
    await insertEntries(client, [
      { sid: sidOf.get(plan.archived.session.id)!, entry: plan.archived.resetEntry },
    ]);
  }
  // Out of the way of the unique (key, generation) and (key) WHERE active indexes, then into place.
  await client.query(
    "UPDATE sessions SET generation = -generation, state = 'archived' WHERE sid = ANY($1::bigint[])",
    [rows.map((r) => r.sid)],
  );
  await updateSessions(
    client,
    plan.sessions.filter((s) => s.state === "archived"),
  );
  await updateSessions(
    client,
    plan.sessions.filter((s) => s.state === "active"),
  );
  return { moved: fromGens.length };
}
