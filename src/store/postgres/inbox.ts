import type { Pool } from "pg";
import { SessiondError } from "../../model/errors.js";
import { newId } from "../../model/ids.js";
import type {
  AdmitInput,
  AdmitResult,
  InboxItem,
  InboxOutcome,
  InboxState,
  SharedInbox,
} from "../../model/inbox.js";
import { jsonText } from "../memory/inbox.js";
import type { InboxOwner } from "./inbox-owners.js";
import { query } from "./pool.js";

interface InboxRow {
  id: string;
  key: string;
  envelope: InboxItem["envelope"];
  dedupe_key: string | null;
  state: InboxState;
  admitted_at: number;
  updated_at: number;
  outcome: InboxOutcome | null;
}

const COLUMNS = "id, key, envelope, dedupe_key, state, admitted_at, updated_at, outcome";

function itemOf(row: InboxRow): InboxItem {
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
 * The inbox in the PostgreSQL database every gateway shares (table `inbox`): each method is one
 * statement, committed synchronously before it resolves, so an input acknowledged as queued by one
 * process is there for any other after a crash. Admission order is the table's identity column. Each
 * unfinished item is owned by one process (inbox-owners.ts); only its owner changes its state.
 */
export class PgInbox implements SharedInbox {
  readonly backend = "postgres";
  readonly shared = true;
  private closed = false;

  /** On the store's pool and heartbeat: the store ends them. */
  constructor(
    private readonly pool: Pool,
    private readonly owner: InboxOwner,
  ) {}

  async admit(input: AdmitInput): Promise<AdmitResult> {
    this.open();
    const envelope = jsonText(input.envelope);
    await this.owner.live();
    const inserted = await query<InboxRow>(
      this.pool,
      `INSERT INTO inbox (id, key, envelope, dedupe_key, state, admitted_at, updated_at, owner)
       VALUES ($1, $2, $3::json, $4, 'pending', $5, $5, $6) ON CONFLICT (dedupe_key) DO NOTHING RETURNING ${COLUMNS}`,
      [input.id ?? newId(input.at), input.key, envelope, input.dedupeKey ?? null, input.at, this.owner.owner],
    );
    if (inserted[0]) return { item: itemOf(inserted[0]), admitted: true };
    const existing = await query<InboxRow>(this.pool, `SELECT ${COLUMNS} FROM inbox WHERE dedupe_key = $1`, [
      input.dedupeKey,
    ]);
    if (!existing[0])
      throw new SessiondError("STORE_UNAVAILABLE", "the inbox item was pruned while admitted");
    return { item: itemOf(existing[0]), admitted: false };
  }

  async transition(id: string, state: InboxState, at: number, outcome?: InboxOutcome): Promise<boolean> {
    this.open();
    // canTransition (model/inbox.ts) in SQL: forward only, never out of an end state; by its owner only.
    const rows = await query<{ id: string }>(
      this.pool,
      `UPDATE inbox SET state = $2, updated_at = $3, outcome = COALESCE($4::json, outcome)
       WHERE id = $1 AND state IN ('pending', 'running') AND state <> $2 AND $2 <> 'pending' AND owner = $5
       RETURNING id`,
      [id, state, at, outcome === undefined ? null : JSON.stringify(outcome), this.owner.owner],
    );
    return rows.length > 0;
  }

  async start(ids: readonly string[], at: number): Promise<boolean> {
    this.open();
    // All or none: a batch runs only when every input of it is still this process's.
    const rows = await query<{ id: string }>(
      this.pool,
      `WITH mine AS (SELECT id FROM inbox WHERE id = ANY($1) AND owner = $2 AND state IN ('pending', 'running')
         FOR UPDATE)
       UPDATE inbox SET state = 'running', updated_at = $3 FROM mine
       WHERE inbox.id = mine.id AND (SELECT count(*) FROM mine) = cardinality($1::text[]) RETURNING inbox.id`,
      [ids, this.owner.owner, at],
    );
    return rows.length === ids.length;
  }

  async takeOver(): Promise<InboxItem[]> {
    this.open();
    const taken = await this.owner.takeOver();
    if (taken.length === 0) return [];
    const ids = taken.map((t) => t.id);
    const rows = await query<InboxRow>(this.pool, `SELECT ${COLUMNS} FROM inbox WHERE id = ANY($1)`, [ids]);
    const byId = new Map(rows.map((row) => [row.id, itemOf(row)]));
    return taken.flatMap(({ id, from }) => {
      const item = byId.get(id);
      if (!item) return [];
      return from === null ? [item] : [{ ...item, takenFrom: from }];
    });
  }

  onHeartbeat(listener: (orphans: boolean) => void): () => void {
    this.open();
    return this.owner.onHeartbeat(listener);
  }

  async get(id: string): Promise<InboxItem | undefined> {
    this.open();
    const rows = await query<InboxRow>(this.pool, `SELECT ${COLUMNS} FROM inbox WHERE id = $1`, [id]);
    return rows[0] && itemOf(rows[0]);
  }

  async unfinished(): Promise<InboxItem[]> {
    this.open();
    const rows = await query<InboxRow>(
      this.pool,
      `SELECT ${COLUMNS} FROM inbox WHERE state IN ('pending', 'running') ORDER BY n`,
    );
    return rows.map(itemOf);
  }

  async prune(before: number): Promise<number> {
    this.open();
    const rows = await query<{ id: string }>(
      this.pool,
      "DELETE FROM inbox WHERE state NOT IN ('pending', 'running') AND updated_at < $1 RETURNING id",
      [before],
    );
    return rows.length;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
  }

  private open(): void {
    if (this.closed) throw new SessiondError("STORE_CLOSED", "the inbox is closed");
  }
}
