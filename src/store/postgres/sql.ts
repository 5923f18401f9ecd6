import type { PoolClient } from "pg";
import type { Entry } from "../../model/entry.js";
import type { Session } from "../../model/session.js";
import { entryFromRow, entryInsertParams, type SessionRow, sessionFromRow } from "../sqlite/rows.js";
import { APPENDED_CHANNEL } from "./append-notify.js";

/**
 * The statements the PostgreSQL store shares between its writer and its maintenance operations. Rows
 * are the SQLite store's (`../sqlite/rows.ts`): the pool returns jsonb as text and int8 as numbers.
 */

/** Rewrites `?` placeholders (the SQLite store's list and scan SQL) as `$1, $2, …`. */
export function numbered(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

export interface LockedSession {
  sid: number;
  session: Session;
}

/** The current sessions of `keys`, locked until the transaction ends (in key order: no deadlocks). */
export async function lockCurrent(client: PoolClient, keys: string[]): Promise<Map<string, LockedSession>> {
  const { rows } = await client.query<SessionRow>(
    "SELECT * FROM sessions WHERE key = ANY($1::text[]) AND state = 'active' ORDER BY key FOR UPDATE",
    [keys],
  );
  return new Map(rows.map((row) => [row.key, { sid: row.sid, session: sessionFromRow(row) }]));
}

/** The highest generation of each key (0 for a key never seen). */
export async function lastGenerations(client: PoolClient, keys: string[]): Promise<Map<string, number>> {
  if (keys.length === 0) return new Map();
  const { rows } = await client.query<{ key: string; generation: number }>(
    "SELECT key, max(generation) AS generation FROM sessions WHERE key = ANY($1::text[]) GROUP BY key",
    [keys],
  );
  return new Map(rows.map((r) => [r.key, r.generation]));
}

const SESSION_INSERT = `INSERT INTO sessions (id, key, generation, state, agent, channel, chat_type, created_by,
  title, created_at, last_activity_at, entry_count, message_count, approx_tokens, context_from_seq,
  last_compaction_seq, overrides, archived_at)
SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::text[], $5::text[], $6::text[], $7::text[],
  $8::text[], $9::text[], $10::bigint[], $11::bigint[], $12::int[], $13::int[], $14::bigint[], $15::int[],
  $16::int[], $17::jsonb[], $18::bigint[])
RETURNING id, sid`;

/** Inserts sessions as they are (every column); their sids by session id. */
export async function insertSessions(client: PoolClient, sessions: Session[]): Promise<Map<string, number>> {
  if (sessions.length === 0) return new Map();
  const columns = sessionColumns(sessions);
  const { rows } = await client.query<{ id: string; sid: number }>(SESSION_INSERT, columns);
  return new Map(rows.map((r) => [r.id, r.sid]));
}

const SESSION_UPDATE = `UPDATE sessions AS s SET key = u.key, generation = u.generation, state = u.state,
  title = u.title, created_at = u.created_at, last_activity_at = u.last_activity_at,
  entry_count = u.entry_count, message_count = u.message_count, approx_tokens = u.approx_tokens,
  context_from_seq = u.context_from_seq, last_compaction_seq = u.last_compaction_seq,
  overrides = u.overrides, archived_at = u.archived_at
FROM unnest($1::text[], $2::text[], $3::int[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
  $9::text[], $10::bigint[], $11::bigint[], $12::int[], $13::int[], $14::bigint[], $15::int[], $16::int[],
  $17::jsonb[], $18::bigint[])
  AS u(id, key, generation, state, agent, channel, chat_type, created_by, title, created_at,
    last_activity_at, entry_count, message_count, approx_tokens, context_from_seq, last_compaction_seq,
    overrides, archived_at)
WHERE s.id = u.id`;

/** Writes every mutable column of these sessions (matched by id). */
export async function updateSessions(client: PoolClient, sessions: Session[]): Promise<void> {
  if (sessions.length === 0) return;
  await client.query(SESSION_UPDATE, sessionColumns(sessions));
}

function sessionColumns(sessions: Session[]): unknown[][] {
  const pick = <T>(f: (s: Session) => T) => sessions.map(f);
  return [
    pick((s) => s.id),
    pick((s) => s.key),
    pick((s) => s.generation),
    pick((s) => s.state),
    pick((s) => s.agent),
    pick((s) => s.channel),
    pick((s) => s.chatType ?? null),
    pick((s) => s.createdBy),
    pick((s) => s.title),
    pick((s) => s.createdAt),
    pick((s) => s.lastActivityAt),
    pick((s) => s.entryCount),
    pick((s) => s.messageCount),
    pick((s) => s.approxTokens),
    pick((s) => s.contextFromSeq),
    pick((s) => s.lastCompactionSeq ?? null),
    pick((s) => JSON.stringify(s.overrides)),
    pick((s) => s.archivedAt ?? null),
  ];
}

const ENTRY_INSERT = `INSERT INTO entries (sid, seq, id, ts, type, idem_key, data)
SELECT * FROM unnest($1::bigint[], $2::int[], $3::text[], $4::bigint[], $5::text[], $6::text[], $7::text[])`;

/** Inserts entries, each with its session's sid, in one statement. */
export async function insertEntries(
  client: PoolClient,
  rows: Array<{ sid: number; entry: Entry }>,
): Promise<void> {
  if (rows.length === 0) return;
  await client.query(ENTRY_INSERT, entryColumns(rows));
}

function entryColumns(rows: Array<{ sid: number; entry: Entry }>): unknown[][] {
  const columns: unknown[][] = [[], [], [], [], [], [], []];
  for (const { sid, entry } of rows) {
    entryInsertParams(sid, entry).forEach((value, i) => {
      columns[i]!.push(value);
    });
  }
  return columns;
}

/** `sql` with its placeholders `$n` moved up by `by`, to be one part of a larger statement. */
function shifted(sql: string, by: number): string {
  return sql.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + by}`);
}

/**
 * An append batch's writes in one statement (one round trip): the entries, the sessions they leave, and
 * the NOTIFY payloads (sent on commit), as data-modifying CTEs.
 */
export async function writeAppends(
  client: PoolClient,
  rows: Array<{ sid: number; entry: Entry }>,
  sessions: Session[],
  notices: string[],
): Promise<void> {
  const parts: string[] = [];
  const params: unknown[] = [];
  if (rows.length > 0) {
    parts.push(`e AS (${shifted(ENTRY_INSERT, params.length)})`);
    params.push(...entryColumns(rows));
  }
  if (sessions.length > 0) {
    parts.push(`s AS (${shifted(SESSION_UPDATE, params.length)})`);
    params.push(...sessionColumns(sessions));
  }
  const notify = `SELECT pg_notify('${APPENDED_CHANNEL}', p) FROM unnest($${params.length + 1}::text[]) AS p`;
  params.push(notices);
  await client.query(parts.length > 0 ? `WITH ${parts.join(", ")} ${notify}` : notify, params);
}

export interface EntryRowWithSid {
  sid: number;
  seq: number;
  id: string;
  ts: number;
  idem_key: string | null;
  data: string;
}

/** The stored entries with these (sid, idempotency key) pairs, by `${sid} ${key}`. */
export async function findIdempotent(
  client: PoolClient,
  sessions: Map<number, string>,
  pairs: Array<{ sid: number; key: string }>,
): Promise<Map<string, Entry>> {
  if (pairs.length === 0) return new Map();
  const { rows } = await client.query<EntryRowWithSid>(
    `SELECT e.sid, e.seq, e.id, e.ts, e.idem_key, e.data FROM entries e
     JOIN unnest($1::bigint[], $2::text[]) AS k(sid, idem) ON e.sid = k.sid AND e.idem_key = k.idem`,
    [pairs.map((p) => p.sid), pairs.map((p) => p.key)],
  );
  return new Map(rows.map((r) => [`${r.sid} ${r.idem_key}`, entryFromRow(sessions.get(r.sid)!, r)]));
}
