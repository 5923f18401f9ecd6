import type { PoolClient } from "pg";
import { SessiondError } from "../../model/errors.js";
import type { Expectation, GroupOutcome, WriteGroup } from "../driver.js";
import type { Fence } from "../fence.js";
import { messageOf } from "../group-commit.js";
import { batchNotices } from "./append-notify.js";
import { foldInbox, refusedAdmissions } from "./inbox-writes.js";
import { leaseLost } from "./leases.js";
import { isConnectionError } from "./pool.js";
import { applyChanges, type InboxOfBatch, sendNotices, writeAlone } from "./sql.js";

/**
 * A batch's groups in the open transaction. Other processes write the same tables, so each group is
 * checked against what it expects (the key's current session and its last seq, read and locked here) and
 * against its lease fence (the lease row held FOR SHARE until COMMIT, so a take-over waits for it).
 * `writer` is this process's id: in the NOTIFYs it sends, and as the owner of the inbox rows it writes.
 */

const OK: GroupOutcome = { ok: true };
const STALE: GroupOutcome = { ok: false, stale: true };
const UNIQUE_VIOLATION = "23505";
const DEADLOCK = "40P01";

interface Found {
  current: Map<string, { id: string; entryCount: number }>;
  lastGeneration: Map<string, number>;
  fences: Set<string>;
}

const fenceId = (f: Fence) => `${f.epoch} ${f.key}`;

/**
 * The current sessions of `keys`, locked until the transaction ends (in key order: no deadlocks between
 * writers), the last generation of `generationKeys`, and which of `fences` still hold: one round trip.
 */
async function find(
  client: PoolClient,
  keys: readonly string[],
  generationKeys: readonly string[],
  fences: readonly Fence[],
): Promise<Found> {
  const found: Found = { current: new Map(), lastGeneration: new Map(), fences: new Set() };
  if (keys.length === 0 && fences.length === 0) return found;
  const { rows } = await client.query<{ kind: string; key: string; id: string | null; n: number }>(
    `WITH s AS (SELECT key, id, entry_count FROM sessions WHERE key = ANY($1::text[]) AND state = 'active'
        ORDER BY key FOR UPDATE),
      g AS (SELECT key, max(generation) AS n FROM sessions WHERE key = ANY($2::text[]) GROUP BY key),
      l AS (SELECT l.key, l.epoch FROM leases l JOIN unnest($3::text[], $4::bigint[]) AS f(key, epoch)
        ON l.key = f.key AND l.epoch = f.epoch ORDER BY l.key FOR SHARE OF l)
    SELECT 's' AS kind, key, id, entry_count::bigint AS n FROM s
    UNION ALL SELECT 'g', key, NULL, n::bigint FROM g
    UNION ALL SELECT 'l', key, NULL, epoch FROM l`,
    [keys, generationKeys, fences.map((f) => f.key), fences.map((f) => f.epoch)],
  );
  for (const row of rows) {
    if (row.kind === "s") found.current.set(row.key, { id: row.id!, entryCount: row.n });
    else if (row.kind === "g") found.lastGeneration.set(row.key, row.n);
    else found.fences.add(fenceId({ key: row.key, epoch: row.n }));
  }
  return found;
}

function holds(e: Expectation, found: Found): boolean {
  const current = found.current.get(e.key);
  if (e.kind === "session") return current?.id === e.sessionId && current.entryCount === e.lastSeq;
  return current === undefined && (found.lastGeneration.get(e.key) ?? 0) === e.lastGeneration;
}

/** The keys a group writes or expects. */
export function keysOf(group: WriteGroup): Set<string> {
  const keys = new Set(group.expects.map((e) => e.key));
  for (const change of group.changes) {
    if (change.kind !== "moveSessions") keys.add(change.session.key);
    else {
      keys.add(change.from);
      for (const s of change.sessions) keys.add(s.key);
    }
  }
  return keys;
}

function findFor(client: PoolClient, expects: readonly Expectation[], fences: readonly Fence[]) {
  return find(
    client,
    expects.map((e) => e.key).sort(),
    expects.flatMap((e) => (e.kind === "noSession" ? [e.key] : [])),
    fences,
  );
}

type AppendChange = Extract<WriteGroup["changes"][number], { kind: "appendEntries" }>;

/** The groups' inbox writes, folded, as `writer`'s rows; undefined when they have none. */
function inboxOf(groups: readonly WriteGroup[], writer: string): InboxOfBatch | undefined {
  const batch = foldInbox(groups);
  return batch && { batch, owner: writer };
}

/** OK for each group, but stale for one of admissions alone whose item was not stored (inbox-writes.ts). */
function outcomesOf(groups: readonly WriteGroup[], landed: ReadonlySet<string>): GroupOutcome[] {
  const refused = refusedAdmissions(groups, landed);
  return groups.map((_, i) => (refused.has(i) ? STALE : OK));
}

/**
 * The batch as one statement that is its own transaction (`writeAlone`), when it only appends to current
 * sessions already stored (and writes inbox rows), each first expectation being such a session's entry
 * count: the steady state of a busy gateway, one round trip per batch. Undefined when the batch is not of that kind.
 * Rejects when anything does not hold (nothing written): the caller goes through `commitFast`.
 */
export async function commitAlone(
  client: PoolClient,
  groups: readonly WriteGroup[],
  writer: string,
): Promise<GroupOutcome[] | undefined> {
  const changes: AppendChange[] = [];
  const expected = new Map<string, number>();
  const seen = new Set<string>();
  const fences = new Map<string, Fence>();
  for (const group of groups) {
    for (const change of group.changes) {
      if (change.kind !== "appendEntries" || change.session.state !== "active") return undefined;
      changes.push(change);
    }
    for (const e of group.expects) {
      if (seen.has(e.key)) continue;
      if (e.kind !== "session") return undefined;
      expected.set(e.sessionId, e.lastSeq);
    }
    for (const key of keysOf(group)) seen.add(key);
    if (group.fence) fences.set(fenceId(group.fence), group.fence);
  }
  const inbox = inboxOf(groups, writer);
  if ((changes.length === 0 && !inbox) || changes.some((c) => !expected.has(c.session.id))) return undefined;
  const notices = batchNotices(writer, groups);
  return outcomesOf(
    groups,
    await writeAlone(client, changes, expected, [...fences.values()], notices, inbox),
  );
}

/**
 * The usual case, in a few statements for the whole batch: a key's first expectation is checked against
 * the database; a later group on the same key was planned on the earlier one, so it holds if that one
 * committed and is stale if it did not. The groups that pass are written together. Throws when a statement
 * fails (another process took a unique key meanwhile, a deadlock...): the caller rolls back and goes
 * group by group (`commitCareful`).
 */
export async function commitFast(
  client: PoolClient,
  groups: readonly WriteGroup[],
  writer: string,
): Promise<GroupOutcome[]> {
  const keys = groups.map(keysOf);
  const seen = new Set<string>();
  const firsts: Expectation[][] = groups.map((group, i) => {
    const first = group.expects.filter((e) => !seen.has(e.key));
    for (const key of keys[i]!) seen.add(key);
    return first;
  });
  const found = await findFor(
    client,
    firsts.flat(),
    groups.flatMap((g) => (g.fence ? [g.fence] : [])),
  );
  const failedKeys = new Set<string>();
  const outcomes = groups.map((group, i): GroupOutcome => {
    let outcome = OK;
    if ([...keys[i]!].some((k) => failedKeys.has(k)) || !firsts[i]!.every((e) => holds(e, found)))
      outcome = STALE;
    else if (group.fence && !found.fences.has(fenceId(group.fence)))
      outcome = { ok: false, error: leaseLost(group.fence) };
    if (!outcome.ok) for (const key of keys[i]!) failedKeys.add(key);
    return outcome;
  });
  const committing = groups.flatMap((_, i) => (outcomes[i]!.ok ? [i] : []));
  const committed = committing.map((i) => groups[i]!);
  const landed = await applyChanges(
    client,
    committed.flatMap((g) => g.changes),
    batchNotices(writer, committed),
    inboxOf(committed, writer),
  );
  for (const i of refusedAdmissions(committed, landed)) outcomes[committing[i]!] = STALE;
  return outcomes;
}

/**
 * Group by group, each in a savepoint and checked against the database as the groups before it left it:
 * a group that fails leaves nothing, and the others still commit.
 */
export async function commitCareful(
  client: PoolClient,
  groups: readonly WriteGroup[],
  writer: string,
): Promise<GroupOutcome[]> {
  const outcomes: GroupOutcome[] = [];
  for (const group of groups) {
    const fences = group.fence ? [group.fence] : [];
    await client.query("SAVEPOINT sessiond_group");
    try {
      const found = await findFor(client, group.expects, fences);
      if (!group.expects.every((e) => holds(e, found))) outcomes.push(STALE);
      else if (group.fence && !found.fences.has(fenceId(group.fence)))
        outcomes.push({ ok: false, error: leaseLost(group.fence) });
      else {
        const landed = await applyChanges(client, group.changes, [], inboxOf([group], writer));
        outcomes.push(outcomesOf([group], landed)[0]!);
      }
      await client.query("RELEASE SAVEPOINT sessiond_group");
    } catch (error) {
      if (isConnectionError(error)) throw error;
      await client.query("ROLLBACK TO SAVEPOINT sessiond_group; RELEASE SAVEPOINT sessiond_group");
      const code = (error as { code?: unknown }).code;
      // Another process got there first (it took the unique key this group wanted): plan it again.
      const raced = code === UNIQUE_VIOLATION || code === DEADLOCK;
      const found = raced ? undefined : await findFor(client, group.expects, []);
      if (raced || !group.expects.every((e) => holds(e, found!))) outcomes.push(STALE);
      else outcomes.push({ ok: false, error: unavailableWrite(error) });
    }
  }
  await sendNotices(
    client,
    batchNotices(
      writer,
      groups.filter((_, i) => outcomes[i]!.ok),
    ),
  );
  return outcomes;
}

/** The server refused a write on its own (nothing of it is stored). */
export function unavailableWrite(error: unknown): SessiondError {
  if (error instanceof SessiondError) return error;
  return new SessiondError("STORE_UNAVAILABLE", `PostgreSQL refused the write: ${messageOf(error)}`, {
    cause: error,
    details: { outcome: "not-written" },
  });
}
