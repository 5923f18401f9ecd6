import type { PoolClient } from "pg";
import type { Entry } from "../../model/entry.js";
import type { Session } from "../../model/session.js";
import type { WriteChange } from "../driver.js";
import type { KeyedSession } from "../encryption/data-keys.js";
import { entryInsertParams, sessionAfterAppendParams } from "../sql/rows.js";
import type { Notice } from "./append-notify.js";
import { ADMITTED, addInbox, type InboxBatch, type InboxParts } from "./inbox-writes.js";
import { searchColumns } from "./search-words.js";

/**
 * The statements that write a batch's changes. Rows are shared with the SQLite store (`../sql/rows.ts`): the pool
 * returns jsonb as text and int8 as numbers. Every statement takes whole columns (`unnest`), so a batch of
 * a hundred appends costs the same few round trips as one.
 */

/** Rewrites `?` placeholders (the SQLite store's list and scan SQL) as `$1, $2, …`. */
export function numbered(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

/** `sql` with its placeholders `$n` moved up by `by`, to be one part of a larger statement. */
function shifted(sql: string, by: number): string {
  return sql.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + by}`);
}

const SESSION_TYPES = `$1::text[], $2::text[], $3::int[], $4::text[], $5::text[], $6::text[], $7::text[],
  $8::text[], $9::text[], $10::bigint[], $11::bigint[], $12::int[], $13::int[], $14::bigint[], $15::int[],
  $16::int[], $17::jsonb[], $18::bigint[]`;

const SESSION_INSERT = `INSERT INTO sessions (id, key, generation, state, agent, channel, chat_type, created_by,
  title, created_at, last_activity_at, entry_count, message_count, approx_tokens, context_from_seq,
  last_compaction_seq, overrides, archived_at, fork_of, fork_key, fork_seq, data_key)
SELECT * FROM unnest(${SESSION_TYPES}, $19::text[], $20::text[], $21::int[], $22::text[]) RETURNING id, sid`;

const SESSION_UPDATE = `UPDATE sessions AS s SET key = u.key, generation = u.generation, state = u.state,
  title = u.title, created_at = u.created_at, last_activity_at = u.last_activity_at,
  entry_count = u.entry_count, message_count = u.message_count, approx_tokens = u.approx_tokens,
  context_from_seq = u.context_from_seq, last_compaction_seq = u.last_compaction_seq,
  overrides = u.overrides, archived_at = u.archived_at
FROM unnest(${SESSION_TYPES})
  AS u(id, key, generation, state, agent, channel, chat_type, created_by, title, created_at,
    last_activity_at, entry_count, message_count, approx_tokens, context_from_seq, last_compaction_seq,
    overrides, archived_at)
WHERE s.id = u.id RETURNING s.sid`;

/**
 * What an append changes in its session (as `foldEntry` does; SQLite's `updateAfterAppend`), only where
 * the session is still current with the entry count the batch was planned on.
 */
const SESSION_AFTER_APPEND = `UPDATE sessions AS s SET title = u.title, created_at = u.created_at,
  last_activity_at = u.last_activity_at, entry_count = u.entry_count, message_count = u.message_count,
  approx_tokens = u.approx_tokens, context_from_seq = u.context_from_seq,
  last_compaction_seq = u.last_compaction_seq
FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::int[], $5::int[], $6::bigint[], $7::int[], $8::int[],
  $9::text[], $10::int[], $11::text[])
  AS u(title, created_at, last_activity_at, entry_count, message_count, approx_tokens, context_from_seq,
    last_compaction_seq, id, expected_count, key)
WHERE s.id = u.id AND s.key = u.key AND s.state = 'active' AND s.entry_count = u.expected_count
RETURNING s.sid`;

function afterAppendColumns(sessions: Iterable<Session>, expected: ReadonlyMap<string, number>): unknown[][] {
  const rows = [...sessions].map((s) => {
    const row = sessionAfterAppendParams(0, s);
    row[row.length - 1] = s.id;
    row.push(expected.get(s.id), s.key);
    return row;
  });
  return columnsOf(rows, 11);
}

/** Rows as the columns `unnest` takes. */
function columnsOf(rows: Iterable<unknown[]>, width: number): unknown[][] {
  const columns: unknown[][] = Array.from({ length: width }, () => []);
  for (const row of rows) {
    row.forEach((value, i) => {
      columns[i]!.push(value);
    });
  }
  return columns;
}

function sessionColumns(sessions: Iterable<Session>): unknown[][] {
  const rows = [...sessions].map((s) => [
    s.id,
    s.key,
    s.generation,
    s.state,
    s.agent,
    s.channel,
    s.chatType ?? null,
    s.createdBy,
    s.title,
    s.createdAt,
    s.lastActivityAt,
    s.entryCount,
    s.messageCount,
    s.approxTokens,
    s.contextFromSeq,
    s.lastCompactionSeq ?? null,
    JSON.stringify(s.overrides),
    s.archivedAt ?? null,
  ]);
  return columnsOf(rows, 18);
}

/** The columns of new sessions: those an update writes too, then where a fork reads its first entries. */
function insertColumns(sessions: Iterable<Session>): unknown[][] {
  const list = [...sessions];
  return [
    ...sessionColumns(list),
    list.map((s) => s.forkedFrom?.sessionId ?? null),
    list.map((s) => s.forkedFrom?.key ?? null),
    list.map((s) => s.forkedFrom?.seq ?? null),
    list.map((s) => (s as KeyedSession).dataKey ?? null),
  ];
}

/** Entries as columns, each row naming its session by id (`$1`); `sessions` gives the sid for that id. */
const ENTRY_INSERT = (sessions: string) => `INSERT INTO entries (sid, seq, id, ts, type, idem_key, data,
  search_words, search_cjk)
SELECT s.sid, u.seq, u.id, u.ts, u.type, u.idem_key, u.data, u.search_words, u.search_cjk
FROM unnest($1::text[], $2::int[], $3::text[], $4::bigint[], $5::text[], $6::text[], $7::text[],
    $8::tsvector[], $9::text[])
  AS u(session_id, seq, id, ts, type, idem_key, data, search_words, search_cjk)
JOIN ${sessions} s ON s.id = u.session_id RETURNING 1`;

function entryColumns(entries: readonly Entry[]): unknown[][] {
  const rows = entries.map((entry) => {
    const row = entryInsertParams(0, entry);
    row[0] = entry.sessionId;
    const search = searchColumns(entry);
    row.push(search.words, search.cjk);
    return row;
  });
  return columnsOf(rows, 9);
}

/** The inbox rows a batch writes with its changes (inbox-writes.ts), as this process (`owner`). */
export interface InboxOfBatch {
  batch: InboxBatch;
  owner: string;
}

/** The ids of the items a statement admitted (stored, not already there). */
export type Landed = ReadonlySet<string>;

const NONE: Landed = new Set();

/** One statement of data-modifying CTEs, each counted, so a row that matched nothing is noticed. */
class Statement implements InboxParts {
  private readonly parts: Array<{ name: string; sql: string; expected: number | undefined }> = [];
  private readonly params: unknown[] = [];
  private readonly outputs: string[] = [];

  add(name: string, sql: string, params: unknown[], expected?: number): void {
    this.parts.push({ name, sql: shifted(sql, this.params.length), expected });
    this.params.push(...params);
  }

  /** An output column besides the counts (its alias must not be a part's name). */
  collect(alias: string, expression: string): void {
    this.outputs.push(`${expression} AS ${alias}`);
  }

  get empty(): boolean {
    return this.parts.length === 0;
  }

  async run(client: PoolClient): Promise<Landed> {
    const ctes = this.parts.map((p) => `${p.name} AS (${p.sql})`).join(",\n");
    const counts = this.parts.map((p) => `(SELECT count(*) FROM ${p.name}) AS ${p.name}`);
    const { rows } = await client.query<Record<string, number | string[] | null>>(
      `WITH ${ctes} SELECT ${[...counts, ...this.outputs].join(", ")}`,
      this.params,
    );
    for (const { name, expected } of this.parts) {
      const written = rows[0]?.[name];
      if (expected !== undefined && written !== expected)
        throw new Error(`${name}: ${written} rows written where ${expected} were planned`);
    }
    return landed(rows[0]);
  }

  /**
   * Runs as a transaction of its own (no BEGIN: one round trip) that the server aborts, with SQLSTATE
   * 40001, unless every part matched the rows it expected (`sessiond_expect`, migration 2).
   */
  async runAlone(client: PoolClient): Promise<Landed> {
    const ctes = this.parts.map((p) => `${p.name} AS (${p.sql})`).join(",\n");
    const checks = this.parts
      .filter((p) => p.expected !== undefined)
      .map((p) => `(SELECT count(*) FROM ${p.name}) = ${p.expected}`);
    const touched = this.parts.map((p) => `(SELECT count(*) FROM ${p.name})`).join(" + ");
    const { rows } = await client.query<Record<string, string[] | null>>(
      `WITH ${ctes} SELECT ${[`sessiond_expect(${checks.join(" AND ") || "true"})`, `${touched} AS touched`, ...this.outputs].join(", ")}`,
      this.params,
    );
    return landed(rows[0]);
  }
}

function landed(row: Record<string, unknown> | undefined): Landed {
  const ids = row?.[ADMITTED];
  return Array.isArray(ids) ? new Set(ids as string[]) : NONE;
}

/** Appends, new sessions and session updates in a row of changes, gathered into whole columns. */
class Segment {
  readonly created = new Map<string, Session>();
  readonly updated = new Map<string, Session>();
  readonly entries: Entry[] = [];

  add(
    change: Exclude<
      WriteChange,
      { kind: "moveSessions" } | { kind: "deleteSession" } | { kind: "rewriteEntries" }
    >,
  ): void {
    const { session } = change;
    // A session created in this segment is inserted once, as the segment's last change leaves it.
    (this.created.has(session.id) || change.kind === "createSession" ? this.created : this.updated).set(
      session.id,
      session,
    );
    if (change.kind === "appendEntries") this.entries.push(...change.entries);
  }

  /**
   * Two statements at most: the updates of stored sessions with their entries (first, so a session
   * archived here frees its key before a new current one is inserted), then the new sessions with theirs.
   */
  async write(client: PoolClient, notices: readonly Notice[], inbox?: InboxOfBatch): Promise<Landed> {
    const stored = new Statement();
    const fresh = new Statement();
    if (this.updated.size > 0)
      stored.add("u", SESSION_UPDATE, sessionColumns(this.updated.values()), this.updated.size);
    const ofStored = this.entries.filter((e) => !this.created.has(e.sessionId));
    const ofFresh = this.entries.filter((e) => this.created.has(e.sessionId));
    if (ofStored.length > 0)
      stored.add("e", ENTRY_INSERT("sessions"), entryColumns(ofStored), ofStored.length);
    if (this.created.size > 0)
      fresh.add("n", SESSION_INSERT, insertColumns(this.created.values()), this.created.size);
    if (ofFresh.length > 0) fresh.add("f", ENTRY_INSERT("n"), entryColumns(ofFresh), ofFresh.length);
    const last = fresh.empty ? stored : fresh;
    if (notices.length > 0) {
      last.add("notified", NOTIFY, [notices.map((n) => n.channel), notices.map((n) => n.payload)]);
    }
    if (inbox) addInbox(last, inbox.batch, inbox.owner);
    const first = stored.empty ? NONE : await stored.run(client);
    return fresh.empty ? first : await fresh.run(client);
  }
}

/**
 * The usual batch, appends to stored current sessions only, as one statement that is its own
 * transaction: each session updated only if it still has the entry count the batch was planned on
 * (`expected`, by session id), each lease fence held FOR SHARE; anything amiss aborts all of it (SQLSTATE
 * 40001, a unique violation or a deadlock) and nothing is written.
 */
export async function writeAlone(
  client: PoolClient,
  changes: ReadonlyArray<Extract<WriteChange, { kind: "appendEntries" }>>,
  expected: ReadonlyMap<string, number>,
  fences: ReadonlyArray<{ key: string; epoch: number }>,
  notices: readonly Notice[],
  inbox?: InboxOfBatch,
): Promise<Landed> {
  const sessions = new Map<string, Session>();
  const entries: Entry[] = [];
  for (const change of changes) {
    sessions.set(change.session.id, change.session);
    entries.push(...change.entries);
  }
  const statement = new Statement();
  if (sessions.size > 0)
    statement.add("u", SESSION_AFTER_APPEND, afterAppendColumns(sessions.values(), expected), sessions.size);
  if (entries.length > 0) statement.add("e", ENTRY_INSERT("sessions"), entryColumns(entries), entries.length);
  if (fences.length > 0) {
    statement.add(
      "l",
      `SELECT 1 FROM leases l JOIN unnest($1::text[], $2::bigint[]) AS f(key, epoch)
        ON l.key = f.key AND l.epoch = f.epoch FOR SHARE OF l`,
      [fences.map((f) => f.key), fences.map((f) => f.epoch)],
      fences.length,
    );
  }
  if (notices.length > 0) {
    statement.add("notified", NOTIFY, [notices.map((n) => n.channel), notices.map((n) => n.payload)]);
  }
  if (inbox) addInbox(statement, inbox.batch, inbox.owner);
  return statement.runAlone(client);
}

const NOTIFY = "SELECT pg_notify(c, p) FROM unnest($1::text[], $2::text[]) AS n(c, p)";

/**
 * Applies `changes` in order, in the open transaction, then the inbox rows with the last of them, and
 * queues `notices` (sent on COMMIT); the ids of the items admitted.
 */
export async function applyChanges(
  client: PoolClient,
  changes: readonly WriteChange[],
  notices: readonly Notice[],
  inbox?: InboxOfBatch,
): Promise<Landed> {
  let segment = new Segment();
  for (const change of changes) {
    if (change.kind === "rewriteEntries") {
      // Erasure: the rows at those seqs are deleted, then inserted again with their new bodies.
      await segment.write(client, []);
      segment = new Segment();
      await client.query(
        "DELETE FROM entries WHERE sid = (SELECT sid FROM sessions WHERE id = $1) AND seq = ANY($2::int[])",
        [change.session.id, change.entries.map((e) => e.seq)],
      );
      segment.add({ kind: "appendEntries", session: change.session, entries: change.entries });
    } else if (change.kind === "moveSessions" || change.kind === "deleteSession") {
      await segment.write(client, []);
      segment = new Segment();
      if (change.kind === "moveSessions") await moveSessions(client, change.sessions);
      else await deleteSession(client, change.session.id);
    } else segment.add(change);
  }
  return segment.write(client, notices, inbox);
}

/** Sessions renumbered onto their new key: out of the way of the unique indexes first, then into place. */
async function moveSessions(client: PoolClient, sessions: readonly Session[]): Promise<void> {
  await client.query(
    "UPDATE sessions SET generation = -generation, state = 'archived' WHERE id = ANY($1::text[])",
    [sessions.map((s) => s.id)],
  );
  for (const state of ["archived", "active"] as const) {
    const some = sessions.filter((s) => s.state === state);
    if (some.length > 0) await client.query(SESSION_UPDATE, sessionColumns(some));
  }
}

async function deleteSession(client: PoolClient, id: string): Promise<void> {
  await client.query(
    "WITH d AS (DELETE FROM sessions WHERE id = $1 RETURNING sid) DELETE FROM entries WHERE sid IN (SELECT sid FROM d)",
    [id],
  );
}

/** Queues `notices` in the open transaction (sent on COMMIT). */
export async function sendNotices(client: PoolClient, notices: readonly Notice[]): Promise<void> {
  if (notices.length === 0) return;
  await client.query(NOTIFY, [notices.map((n) => n.channel), notices.map((n) => n.payload)]);
}
