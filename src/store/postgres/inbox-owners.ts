import type { Pool } from "pg";
import { inTransaction, query, queryUnflushed } from "./pool.js";

/** Any constant: processes taking over orphaned inbox items do it one at a time. */
const TAKEOVER_LOCK = 7_420_018;

const EXPIRY = "clock_timestamp() + $2 * interval '1 millisecond'";
const BEAT = `INSERT INTO inbox_owners (owner, expires_at) VALUES ($1, ${EXPIRY})
  ON CONFLICT (owner) DO UPDATE SET expires_at = EXCLUDED.expires_at`;

/** An unfinished item (alias `i`) no live process owns: its owner's heartbeat lapsed, or it has none. */
const ORPHANED = `i.state IN ('pending', 'running') AND i.owner IS DISTINCT FROM $1
  AND NOT EXISTS (SELECT 1 FROM inbox_owners o WHERE o.owner = i.owner AND o.expires_at > clock_timestamp())`;

/**
 * This process as an owner of inbox items (migration 5): a row of `inbox_owners` whose expiry (the
 * server's clock) it pushes forward every third of the TTL while it lives, from the first admission or
 * take-over on. A process that dies (or is paused past the TTL) stops renewing it; its unfinished items are
 * then orphans, and a live process takes them over in one transaction under an advisory lock, so each goes
 * to exactly one process. A heartbeat lost in a server crash (renewals do not wait for the WAL) only makes
 * its process look dead sooner: its items go elsewhere, and `start` stops it running them itself.
 */
export class InboxOwner {
  private alive: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly listeners = new Set<(orphans: boolean) => void>();

  constructor(
    private readonly pool: Pool,
    readonly owner: string,
    readonly ttlMs: number,
  ) {}

  /** Registers the heartbeat (once) and starts renewing it; before this process owns anything. */
  live(): Promise<void> {
    this.alive ??= query(this.pool, BEAT, [this.owner, this.ttlMs]).then(
      () => {
        this.timer = setInterval(() => void this.beat(), Math.max(50, Math.floor(this.ttlMs / 3)));
        this.timer.unref();
      },
      (error: unknown) => {
        this.alive = undefined;
        throw error;
      },
    );
    return this.alive;
  }

  /** Calls `listener` after every heartbeat with whether some unfinished item has no live owner. */
  onHeartbeat(listener: (orphans: boolean) => void): () => void {
    this.listeners.add(listener);
    void this.live().catch(() => {});
    return () => this.listeners.delete(listener);
  }

  /**
   * Makes this process the owner of every orphaned item, in one transaction; returns their ids in
   * admission order, each with the owner it was taken from. Owners left with nothing unfinished are
   * forgotten (the table stays small).
   */
  async takeOver(): Promise<Array<{ id: string; from: string | null }>> {
    await this.live();
    return inTransaction(this.pool, async (client) => {
      await client.query("SELECT pg_advisory_xact_lock($1)", [TAKEOVER_LOCK]);
      // A statement after the lock: its snapshot sees what the previous holder of the lock took.
      const { rows } = await client.query<{ id: string; n: string; from: string | null }>(
        `WITH orphaned AS (SELECT i.id, i.owner FROM inbox i WHERE ${ORPHANED} FOR UPDATE)
         UPDATE inbox SET owner = $1 FROM orphaned WHERE inbox.id = orphaned.id
         RETURNING inbox.id, inbox.n, orphaned.owner AS "from"`,
        [this.owner],
      );
      await client.query(
        `DELETE FROM inbox_owners o WHERE o.expires_at <= clock_timestamp()
         AND NOT EXISTS (SELECT 1 FROM inbox WHERE owner = o.owner AND state IN ('pending', 'running'))`,
      );
      return rows.sort((a, b) => Number(BigInt(a.n) - BigInt(b.n))).map((r) => ({ id: r.id, from: r.from }));
    });
  }

  /** Stops the heartbeat and deletes it: what this process still owns is at once another's to take. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    this.listeners.clear();
    if (!this.alive) return;
    this.alive = undefined;
    await query(this.pool, "DELETE FROM inbox_owners WHERE owner = $1", [this.owner]).catch(() => {});
  }

  private async beat(): Promise<void> {
    const rows = await queryUnflushed<{ orphans: boolean }>(
      this.pool,
      `WITH beat AS (${BEAT} RETURNING 1)
       SELECT (SELECT count(*) FROM beat) > 0 AND EXISTS (SELECT 1 FROM inbox i WHERE ${ORPHANED}) AS orphans`,
      [this.owner, this.ttlMs],
    ).catch(() => undefined);
    if (!rows) return;
    const orphans = rows[0]?.orphans === true;
    for (const listener of this.listeners) listener(orphans);
  }
}
