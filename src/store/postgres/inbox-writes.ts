import { canTransition, type InboxItem, type InboxOutcome, type InboxState } from "../../model/inbox.js";
import type { InboxWrite, WriteGroup } from "../driver.js";

/**
 * A batch's inbox writes (`WriteGroup.inbox`) as two parts of the statement that writes its entries, so
 * that an input's admission commits with its user entry and a turn's end with its reply: one round trip,
 * one transaction. Folded first, per item, in order: an item admitted and ended in the same batch is
 * inserted as it ends; several ends of one item are one (each allowed from the one before, as
 * `canTransition` says). The table is shared by every gateway (inbox-owners.ts): a new row is this
 * process's, and an end moves only a row this process owns, so a take-over by another process wins.
 */
export interface InboxBatch {
  admits: Map<string, { item: InboxItem; envelopeJson: string }>;
  ends: Map<string, { state: InboxState; at: number; outcome?: InboxOutcome }>;
}

export function foldInbox(groups: readonly WriteGroup[]): InboxBatch | undefined {
  let batch: InboxBatch | undefined;
  for (const group of groups) {
    if (!group.inbox) continue;
    batch ??= { admits: new Map(), ends: new Map() };
    for (const write of group.inbox) fold(batch, write);
  }
  return batch;
}

function fold(batch: InboxBatch, write: InboxWrite): void {
  if (write.kind === "admit") {
    if (batch.admits.has(write.item.id)) return;
    batch.admits.set(write.item.id, {
      item: { ...write.item },
      envelopeJson: write.envelopeJson ?? JSON.stringify(write.item.envelope),
    });
    return;
  }
  const admitted = batch.admits.get(write.id)?.item;
  if (admitted) {
    if (!canTransition(admitted.state, write.state)) return;
    admitted.state = write.state;
    admitted.updatedAt = write.at;
    if (write.outcome) admitted.outcome = write.outcome;
    return;
  }
  const earlier = batch.ends.get(write.id);
  if (earlier && !canTransition(earlier.state, write.state)) return;
  const outcome = write.outcome ?? earlier?.outcome;
  batch.ends.set(write.id, { state: write.state, at: write.at, ...(outcome ? { outcome } : {}) });
}

/** What a statement needs of a batch's inbox parts: named data-modifying CTEs and an output column. */
export interface InboxParts {
  add(name: string, sql: string, params: unknown[]): void;
  collect(alias: string, expression: string): void;
}

/** The output column of the ids the statement admitted (`landed`). */
export const ADMITTED = "admitted";

/** A new item unless its id or dedupe key is stored (ON CONFLICT DO NOTHING), in the batch's order. */
const ADMIT = `INSERT INTO inbox (id, key, envelope, dedupe_key, state, admitted_at, updated_at, outcome, owner)
SELECT u.id, u.key, u.envelope::json, u.dedupe_key, u.state, u.admitted_at, u.updated_at, u.outcome::json, $9
FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::bigint[], $8::text[])
  WITH ORDINALITY AS u(id, key, envelope, dedupe_key, state, admitted_at, updated_at, outcome, ord)
ORDER BY u.ord
ON CONFLICT DO NOTHING RETURNING id`;

/** canTransition (model/inbox.ts) in SQL, as `PgInbox.transition`: forward only, by its owner only. */
const END = `UPDATE inbox AS i SET state = u.state, updated_at = u.at, outcome = COALESCE(u.outcome::json, i.outcome)
FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[]) AS u(id, state, at, outcome)
WHERE i.id = u.id AND i.owner = $5 AND i.state IN ('pending', 'running') AND i.state <> u.state
  AND u.state <> 'pending'
RETURNING i.id`;

/** Adds the batch's inbox writes to `statement`, owned by `owner`. */
export function addInbox(statement: InboxParts, batch: InboxBatch, owner: string): void {
  if (batch.admits.size > 0) {
    const items = [...batch.admits.values()];
    statement.add("a", ADMIT, [
      items.map((a) => a.item.id),
      items.map((a) => a.item.key),
      items.map((a) => a.envelopeJson),
      items.map((a) => a.item.dedupeKey ?? null),
      items.map((a) => a.item.state),
      items.map((a) => a.item.admittedAt),
      items.map((a) => a.item.updatedAt),
      items.map((a) => (a.item.outcome ? JSON.stringify(a.item.outcome) : null)),
      owner,
    ]);
    statement.collect(ADMITTED, "(SELECT array_agg(id) FROM a)");
  }
  if (batch.ends.size > 0) {
    const ends = [...batch.ends];
    statement.add("d", END, [
      ends.map(([id]) => id),
      ends.map(([, e]) => e.state),
      ends.map(([, e]) => e.at),
      ends.map(([, e]) => (e.outcome ? JSON.stringify(e.outcome) : null)),
      owner,
    ]);
  }
}

/**
 * The groups refused as stale because their admission was not stored: a group of admissions alone (an
 * `Inbox.admit`, planned on a read of the dedupe key) whose item another process admitted meanwhile, so
 * the core plans it again and finds that one. An admission that rides with entries (a turn's input) is
 * stored unless its item is there already, as `InboxWrite` says, and its group stands.
 */
export function refusedAdmissions(groups: readonly WriteGroup[], landed: ReadonlySet<string>): Set<number> {
  const refused = new Set<number>();
  groups.forEach((group, i) => {
    if (!group.inbox || group.changes.length > 0 || group.expects.length > 0) return;
    if (!group.inbox.every((w) => w.kind === "admit")) return;
    if (group.inbox.some((w) => w.kind === "admit" && !landed.has(w.item.id))) refused.add(i);
  });
  return refused;
}

export function hasAdmission(groups: readonly WriteGroup[]): boolean {
  return groups.some((g) => g.inbox?.some((w) => w.kind === "admit") === true);
}
