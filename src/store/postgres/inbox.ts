import type { Pool } from "pg";
import { SessiondError } from "../../model/errors.js";
import type { InboxItem, InboxOutcome, InboxState, SharedInbox } from "../../model/inbox.js";
import type { GroupCommit } from "../group-commit.js";
import type { Operation } from "../log-batch.js";
import { StoreInbox } from "../store-inbox.js";
import type { InboxOwner } from "./inbox-owners.js";
import type { PgDriverInbox } from "./inbox-rows.js";
import { query } from "./pool.js";

/**
 * The inbox in the PostgreSQL database every gateway shares (table `inbox`). Admissions are written by
 * the store's writer (`StoreInbox`): an input's admission commits in the statement of a batch, with its
 * user entry when its turn starts at once, and a turn's end with its reply; each resolves once committed
 * synchronously, so an input acknowledged as queued by one process is there for any other after a crash.
 * Admission order is the table's identity column. Each unfinished item is owned by one process
 * (inbox-owners.ts); only its owner changes its state, so a transition on its own is one statement here
 * that says whether it still owned the item.
 */
export class PgInbox extends StoreInbox implements SharedInbox {
  readonly shared = true;
  private ended = false;

  /** On the store's pool and heartbeat: the store ends them. */
  constructor(
    store: object,
    private readonly rows: PgDriverInbox,
    writer: GroupCommit<Operation>,
    private readonly pool: Pool,
    private readonly owner: InboxOwner,
  ) {
    super("postgres", store, rows, writer);
  }

  override async transition(
    id: string,
    state: InboxState,
    at: number,
    outcome?: InboxOutcome,
  ): Promise<boolean> {
    this.assertOpen();
    // canTransition (model/inbox.ts) in SQL: forward only, never out of an end state; by its owner only.
    const rows = await query<{ id: string }>(
      this.pool,
      `UPDATE inbox SET state = $2, updated_at = $3, outcome = COALESCE($4::json, outcome)
       WHERE id = $1 AND state IN ('pending', 'running') AND state <> $2 AND $2 <> 'pending' AND owner = $5
       RETURNING id`,
      [
        id,
        state,
        at,
        outcome === undefined ? null : JSON.stringify(this.rows.storedOutcome(id, outcome)),
        this.owner.owner,
      ],
    );
    return rows.length > 0;
  }

  async start(ids: readonly string[], at: number): Promise<boolean> {
    this.assertOpen();
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
    this.assertOpen();
    const taken = await this.owner.takeOver();
    if (taken.length === 0) return [];
    const byId = new Map((await this.rows.byIds(taken.map((t) => t.id))).map((item) => [item.id, item]));
    return taken.flatMap(({ id, from }) => {
      const item = byId.get(id);
      if (!item) return [];
      return from === null ? [item] : [{ ...item, takenFrom: from }];
    });
  }

  onHeartbeat(listener: (orphans: boolean) => void): () => void {
    this.assertOpen();
    return this.owner.onHeartbeat(listener);
  }

  override async close(): Promise<void> {
    this.ended = true;
    await super.close();
  }

  private assertOpen(): void {
    if (this.ended) throw new SessiondError("STORE_CLOSED", "the inbox is closed");
  }
}
