import { hostname } from "node:os";
import type { Pool } from "pg";
import { SessiondError } from "../../model/errors.js";
import { newId } from "../../model/ids.js";
import type { Fence } from "../fence.js";
import type { PgNotifications } from "./notifications.js";
import { query } from "./pool.js";

export const LEASE_CHANNEL = "sessiond_lease_free";

/**
 * In a statement that is its own transaction, for each row it writes: its commit does not wait for the WAL
 * flush. One round trip, where BEGIN; SET LOCAL; …; COMMIT took four (the setting is read when the
 * transaction commits and is gone after it: the pooled connection's next transaction is synchronous again).
 */
const UNFLUSHED = "set_config('synchronous_commit', 'off', true) AS unflushed";

export interface LeaseOptions {
  /** How long a lease lasts without renewal: a crashed holder's lapses after this. Default 30 s. */
  ttlMs?: number;
}

interface Waiter {
  wake: () => void;
}

/**
 * One turn per key across processes: a row per key in `leases` with its holder, an expiry (the server's
 * clock) and an epoch that every take increments. A take succeeds only when the key is free or its lease
 * expired; the holder renews its leases every third of the TTL while its turns run, and frees them with a
 * NOTIFY (frees and renewals commit without waiting for the WAL: one lost in a server crash only lets the
 * lease lapse; takes wait for it, so an epoch is never handed out twice). A process that wants a held key waits for that NOTIFY or for the holder's expiry, whichever
 * comes first (never polling faster). The epoch is the turn's fence: its appends commit only while the
 * lease still has it (see batch-commit.ts), so a holder paused past its lease writes nothing.
 */
export class PgLeases {
  readonly holder = `${hostname()}:${process.pid}:${newId(Date.now()).slice(-10)}`;
  readonly ttlMs: number;
  private readonly held = new Map<string, number>();
  /**
   * Keys whose lease this process holds and that had no needs-attention mark (`runtime_attention`) when
   * it was taken, none set by this process since: a successful turn has no mark to clear.
   */
  private readonly unmarked = new Set<string>();
  private readonly waiters = new Map<string, Set<Waiter>>();
  private renewal: NodeJS.Timeout | undefined;
  private listening: Promise<unknown> | undefined;

  constructor(
    private readonly pool: Pool,
    private readonly notifications: PgNotifications,
    options: LeaseOptions = {},
  ) {
    this.ttlMs = options.ttlMs ?? 30_000;
    if (!(Number.isInteger(this.ttlMs) && this.ttlMs >= 100)) {
      throw new SessiondError("INVALID_ARGUMENT", "the lease TTL must be an integer of at least 100 ms");
    }
  }

  /** Waits until this process holds `key`'s lease; its fence. `onWait`: called once if another holds it. */
  async acquire(key: string, onWait?: () => void): Promise<Fence> {
    await this.listen();
    for (;;) {
      let woken = false;
      let wake!: () => void;
      const notified = new Promise<void>((resolve) => {
        wake = () => {
          woken = true;
          resolve();
        };
      });
      // Registered before the attempt, so a release between the attempt and the wait is not missed.
      const waiter = { wake };
      this.waiterSet(key).add(waiter);
      try {
        const waitMs = await this.tryTake(key);
        if (typeof waitMs === "object") return waitMs;
        onWait?.();
        onWait = undefined;
        if (!woken) {
          let timer: NodeJS.Timeout | undefined;
          await Promise.race([
            notified,
            new Promise<void>((resolve) => {
              timer = setTimeout(resolve, waitMs);
            }),
          ]);
          clearTimeout(timer);
        }
      } finally {
        this.waiterSet(key).delete(waiter);
        if (this.waiters.get(key)?.size === 0) this.waiters.delete(key);
      }
    }
  }

  /**
   * Whether `key` has no needs-attention mark, as far as its lease tells: this process holds it, and no
   * mark was there when it was taken (marks are set by turns, each under its key's lease) nor set since.
   */
  withoutAttention(key: string): boolean {
    return this.unmarked.has(key) && this.held.has(key);
  }

  /** A needs-attention mark is being set on `key` (`withoutAttention` is false until its next take). */
  attentionSet(key: string): void {
    this.unmarked.delete(key);
  }

  /** Frees the lease (if it is still this one) and tells the other processes. */
  async release(fence: Fence): Promise<void> {
    if (this.held.get(fence.key) === fence.epoch) {
      this.held.delete(fence.key);
      this.unmarked.delete(fence.key);
    }
    if (this.held.size === 0) this.stopRenewal();
    await query(
      this.pool,
      `WITH freed AS (UPDATE leases SET holder = NULL, expires_at = NULL
         WHERE key = $1 AND epoch = $2 AND holder = $3 RETURNING key)
       SELECT pg_notify('${LEASE_CHANNEL}', key), ${UNFLUSHED} FROM freed`,
      [fence.key, fence.epoch, this.holder],
    );
  }

  close(): void {
    this.stopRenewal();
    for (const set of this.waiters.values()) for (const w of set) w.wake();
  }

  /** The lease's fence, or how long to wait before trying again (ms). */
  private async tryTake(key: string): Promise<Fence | number> {
    const rows = await query<{ epoch: number | null; wait_ms: number | null; marked: boolean }>(
      this.pool,
      `WITH taken AS (
         INSERT INTO leases AS l (key, holder, epoch, expires_at)
         VALUES ($1, $2, 1, clock_timestamp() + $3 * interval '1 millisecond')
         ON CONFLICT (key) DO UPDATE SET holder = EXCLUDED.holder, epoch = l.epoch + 1,
           expires_at = EXCLUDED.expires_at
         WHERE l.holder IS NULL OR l.expires_at <= clock_timestamp()
         RETURNING epoch)
       SELECT (SELECT epoch FROM taken) AS epoch,
         (SELECT ceil(extract(epoch FROM expires_at - clock_timestamp()) * 1000)::int FROM leases WHERE key = $1)
           AS wait_ms,
         EXISTS (SELECT 1 FROM runtime_attention WHERE key = $1) AS marked`,
      [key, this.holder, this.ttlMs],
    );
    const row = rows[0];
    if (row?.epoch != null) {
      const fence = { key, epoch: row.epoch };
      this.held.set(key, row.epoch);
      if (row.marked) this.unmarked.delete(key);
      else this.unmarked.add(key);
      this.startRenewal();
      return fence;
    }
    // Until the holder's lease would lapse (a NOTIFY comes sooner if it frees it), at least a few ms.
    return Math.min(Math.max(row?.wait_ms ?? 0, 0) + 5, this.ttlMs);
  }

  private listen(): Promise<unknown> {
    this.listening ??= this.notifications
      .listen(LEASE_CHANNEL, (key) => {
        for (const w of this.waiters.get(key) ?? []) w.wake();
      })
      .then(() =>
        // Releases missed while the connection was down: everyone tries again.
        this.notifications.onReconnect(() => {
          for (const set of this.waiters.values()) for (const w of set) w.wake();
        }),
      )
      .catch((error: unknown) => {
        this.listening = undefined;
        throw error;
      });
    return this.listening;
  }

  private waiterSet(key: string): Set<Waiter> {
    let set = this.waiters.get(key);
    if (!set) {
      set = new Set();
      this.waiters.set(key, set);
    }
    return set;
  }

  private startRenewal(): void {
    if (this.renewal) return;
    this.renewal = setInterval(() => void this.renew(), Math.max(50, Math.floor(this.ttlMs / 3)));
    this.renewal.unref();
  }

  private stopRenewal(): void {
    clearInterval(this.renewal);
    this.renewal = undefined;
  }

  /** Extends every lease this process holds, in one statement; a lease taken over meanwhile is dropped. */
  private async renew(): Promise<void> {
    const held = [...this.held];
    if (held.length === 0) return;
    const rows = await query<{ key: string }>(
      this.pool,
      `UPDATE leases AS l SET expires_at = clock_timestamp() + $4 * interval '1 millisecond'
       FROM unnest($1::text[], $2::bigint[]) AS h(key, epoch)
       WHERE l.key = h.key AND l.epoch = h.epoch AND l.holder = $3 RETURNING l.key, ${UNFLUSHED}`,
      [held.map(([k]) => k), held.map(([, e]) => e), this.holder, this.ttlMs],
    ).catch(() => undefined);
    if (!rows) return;
    const renewed = new Set(rows.map((r) => r.key));
    for (const [key, epoch] of held)
      if (!renewed.has(key) && this.held.get(key) === epoch) this.held.delete(key);
  }
}

export function leaseLost(fence: Fence): SessiondError {
  return new SessiondError(
    "LEASE_LOST",
    `the turn's lease on ${JSON.stringify(fence.key)} (epoch ${fence.epoch}) was taken over by another process; nothing of this write was stored`,
    { details: { key: fence.key, epoch: fence.epoch, outcome: "not-written" } },
  );
}
