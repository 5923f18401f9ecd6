import type { Pool } from "pg";
import type { InboxItem, InboxOutcome, InboxState } from "../../model/inbox.js";
import type { DriverInbox } from "../driver.js";
import { openInboxItem, sealedOutcome } from "../encryption/sealed-inbox.js";
import { query } from "./pool.js";

/** A row of the `inbox` table (schema.ts, migrations 1 and 5) as the pool returns it. */
export interface InboxRow {
  id: string;
  key: string;
  envelope: InboxItem["envelope"];
  dedupe_key: string | null;
  state: InboxState;
  admitted_at: number;
  updated_at: number;
  outcome: InboxOutcome | null;
}

export const INBOX_COLUMNS = "id, key, envelope, dedupe_key, state, admitted_at, updated_at, outcome";

export function itemOf(row: InboxRow): InboxItem {
  const item: InboxItem = {
    id: row.id,
    key: row.key,
    envelope: row.envelope,
    state: row.state,
    admittedAt: row.admitted_at,
    updatedAt: row.updated_at,
  };
  if (row.dedupe_key !== null) item.dedupeKey = row.dedupe_key;
  if (row.outcome !== null) item.outcome = row.outcome;
  return item;
}

/**
 * The reads of the inbox table the driver keeps (`StoreDriver.inbox`): its writes are rows of the batches
 * the driver commits (inbox-writes.ts). Every read goes to the server: other processes write the table too.
 */
export class PgDriverInbox implements DriverInbox {
  /** The inbox key of an encrypted store (encryption/sealed-inbox.ts): rows are opened as they are read. */
  private sealKey: Buffer | undefined;

  constructor(private readonly pool: Pool) {}

  /** From now on, reads open sealed envelopes and outcomes, and `storedOutcome` seals. */
  sealWith(key: Buffer): void {
    this.sealKey = key;
  }

  /** An outcome as the row keeps it: sealed when the store is encrypted. */
  storedOutcome(id: string, outcome: InboxOutcome): InboxOutcome {
    return this.sealKey ? sealedOutcome(this.sealKey, id, outcome) : outcome;
  }

  private itemOf(row: InboxRow): InboxItem {
    const item = itemOf(row);
    return this.sealKey ? openInboxItem(this.sealKey, item) : item;
  }

  async get(id: string): Promise<InboxItem | undefined> {
    const rows = await query<InboxRow>(this.pool, `SELECT ${INBOX_COLUMNS} FROM inbox WHERE id = $1`, [id]);
    return rows[0] && this.itemOf(rows[0]);
  }

  async byDedupeKey(dedupeKey: string): Promise<InboxItem | undefined> {
    const rows = await query<InboxRow>(
      this.pool,
      `SELECT ${INBOX_COLUMNS} FROM inbox WHERE dedupe_key = $1`,
      [dedupeKey],
    );
    return rows[0] && this.itemOf(rows[0]);
  }

  async byIds(ids: readonly string[]): Promise<InboxItem[]> {
    const rows = await query<InboxRow>(this.pool, `SELECT ${INBOX_COLUMNS} FROM inbox WHERE id = ANY($1)`, [
      ids,
    ]);
    return rows.map((row) => this.itemOf(row));
  }

  async unfinished(): Promise<InboxItem[]> {
    const rows = await query<InboxRow>(
      this.pool,
      `SELECT ${INBOX_COLUMNS} FROM inbox WHERE state IN ('pending', 'running') ORDER BY n`,
    );
    return rows.map((row) => this.itemOf(row));
  }

  async prune(before: number): Promise<number> {
    const rows = await query<{ id: string }>(
      this.pool,
      "DELETE FROM inbox WHERE state NOT IN ('pending', 'running') AND updated_at < $1 RETURNING id",
      [before],
    );
    return rows.length;
  }
}
