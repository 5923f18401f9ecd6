import type { Pool, PoolClient } from "pg";
import type { Entry } from "../../model/entry.js";
import type { Session } from "../../model/session.js";
import type {
  ForeignChanges,
  GroupOutcome,
  KeptContext,
  KeyHead,
  StoreDriver,
  WriteGroup,
} from "../driver.js";
import type { NormalisedQuery } from "../session-query.js";
import { listSessionsSql, scanSessionsSql } from "../sql/list-sql.js";
import { type EntryRow, entryFromRow, type SessionRow, sessionFromRow } from "../sql/rows.js";
import type { EntryRange, SessionScan } from "../store.js";
import { CHANGED_CHANNEL } from "./append-notify.js";
import { commitAlone, commitCareful, commitFast, unavailableWrite } from "./batch-commit.js";
import { type BatchFallback, BatchFallbacks } from "./batch-fallbacks.js";
import { ForeignKeys } from "./foreign-keys.js";
import type { InboxOwner } from "./inbox-owners.js";
import { PgDriverInbox } from "./inbox-rows.js";
import { hasAdmission } from "./inbox-writes.js";
import { KeyHolds } from "./key-holds.js";
import type { PgNotifications } from "./notifications.js";
import { connect, inTransaction, isConnectionError, query, release, unavailable } from "./pool.js";
import { ACTIVITY_BUCKET } from "./schema.js";
import { numbered } from "./sql.js";

const BEGIN_STRICT = "BEGIN";
/** Relaxed writes: acknowledged once committed, before the WAL reaches the disk. */
const BEGIN_RELAXED = "BEGIN; SET LOCAL synchronous_commit = off";

/**
 * Sessions and entries in PostgreSQL, shared with other processes. Reads go to the server through the
 * pool; the core caches what it reads and drops what other processes changed (their NOTIFYs, ids only:
 * foreign-keys.ts). A batch commits as one transaction on one pooled connection (batch-commit.ts), given
 * back when it ends: every group checked against what it expects and its lease fence, the passing ones
 * written together, and their appends acknowledged only after COMMIT returns (`synchronous_commit` on).
 * The inbox of admitted inputs is a table of the same database (`inbox`): its rows are written by the
 * batches too (inbox-writes.ts), as this process, the owner whose heartbeat `owner` keeps.
 */
export class PostgresDriver implements StoreDriver {
  readonly backend = "postgres";
  readonly rewritesEntries = true;
  /** The next batch is planned and sent on a second connection while the previous one's COMMIT is in flight. */
  readonly concurrentCommits = 2;
  readonly remoteReads = true;
  readonly inbox: PgDriverInbox;
  private readonly foreign: ForeignKeys;
  private readonly holds: KeyHolds;
  readonly fallbacks: BatchFallbacks;
  private stopListening: (() => void) | undefined;
  private closed = false;

  constructor(
    private readonly pool: Pool,
    private readonly notifications: PgNotifications,
    /** This store's id in the NOTIFYs it sends, so it skips its own; the owner of the inbox rows it writes. */
    private readonly writer: string,
    /** This process's heartbeat as an owner of inbox items: registered before its first admission. */
    private readonly owner: InboxOwner,
    onFallback?: (fallback: BatchFallback) => void,
  ) {
    this.inbox = new PgDriverInbox(pool);
    this.holds = new KeyHolds(pool);
    this.foreign = new ForeignKeys(writer);
    this.fallbacks = new BatchFallbacks(onFallback);
  }

  /** Starts hearing what other processes change (before the core caches anything it could miss). */
  async listen(): Promise<void> {
    this.notifications.onReconnect(() => this.foreign.lost());
    this.stopListening = await this.notifications.listen(CHANGED_CHANNEL, (payload) =>
      this.foreign.noted(payload),
    );
  }

  // ——— reads ———

  async loadKey(key: string): Promise<KeyHead> {
    const rows = await query<SessionRow & { last_generation: number | null }>(
      this.pool,
      `SELECT m.last_generation, s.* FROM (SELECT max(generation) AS last_generation FROM sessions WHERE key = $1) m
       LEFT JOIN sessions s ON s.key = $1 AND s.state = 'active'`,
      [key],
    );
    const row = rows[0];
    const lastGeneration = row?.last_generation ?? 0;
    return row?.id ? { current: sessionFromRow(row), lastGeneration } : { lastGeneration };
  }

  async generations(key: string): Promise<Session[]> {
    const rows = await query<SessionRow>(
      this.pool,
      "SELECT * FROM sessions WHERE key = $1 ORDER BY generation DESC",
      [key],
    );
    return rows.map(sessionFromRow);
  }

  async forksOf(sessionIds: readonly string[]): Promise<Session[]> {
    const rows = await query<SessionRow>(
      this.pool,
      "SELECT * FROM sessions WHERE fork_of = ANY($1::text[])",
      [sessionIds],
    );
    return rows.map(sessionFromRow);
  }

  async sessionById(id: string): Promise<Session | undefined> {
    const rows = await query<SessionRow>(this.pool, "SELECT * FROM sessions WHERE id = $1", [id]);
    return rows[0] && sessionFromRow(rows[0]);
  }

  async findIdempotent(session: Session, keys: readonly string[]): Promise<Map<string, Entry>> {
    const rows = await query<EntryRow>(
      this.pool,
      `SELECT e.seq, e.id, e.ts, e.idem_key, e.data FROM entries e JOIN sessions s ON s.sid = e.sid
       WHERE s.id = $1 AND e.idem_key = ANY($2::text[])`,
      [session.id, keys],
    );
    return new Map(rows.map((row) => [row.idem_key!, entryFromRow(session.id, row)]));
  }

  async readEntries(session: Session, range: EntryRange & { order: "asc" | "desc" }): Promise<Entry[]> {
    const rows = await query<EntryRow>(
      this.pool,
      `SELECT e.seq, e.id, e.ts, e.idem_key, e.data FROM entries e JOIN sessions s ON s.sid = e.sid
       WHERE s.id = $1 AND e.seq > $2 AND e.seq < $3 ORDER BY e.seq ${range.order === "asc" ? "ASC" : "DESC"}
       LIMIT $4`,
      [session.id, range.afterSeq ?? 0, range.beforeSeq ?? 2 ** 31 - 1, range.limit ?? null],
    );
    return rows.map((row) => entryFromRow(session.id, row));
  }

  async loadKept(session: Session): Promise<KeptContext> {
    // Bounded by the session as the core knows it: entries are immutable, so this is one consistent view.
    const rows = await query<EntryRow & { type: string }>(
      this.pool,
      `SELECT e.seq, e.id, e.ts, e.idem_key, e.data, e.type FROM entries e JOIN sessions s ON s.sid = e.sid
       WHERE s.id = $1 AND ((e.seq >= $2 AND e.seq <= $3 AND e.type <> 'compaction') OR e.seq = $4)
       ORDER BY e.seq`,
      [session.id, session.contextFromSeq, session.entryCount, session.lastCompactionSeq ?? 0],
    );
    const kept: KeptContext = { entries: [] };
    for (const row of rows) {
      const entry = entryFromRow(session.id, row);
      if (entry.type !== "compaction") kept.entries.push(entry);
      else if (entry.seq === session.lastCompactionSeq) kept.summary = entry;
    }
    return kept;
  }

  async list(q: NormalisedQuery): Promise<Session[]> {
    const { sql, params } = listSessionsSql(q, ACTIVITY_BUCKET);
    return (await query<SessionRow>(this.pool, numbered(sql), params)).map(sessionFromRow);
  }

  async scan(scan: SessionScan & { limit: number }): Promise<Session[]> {
    const { sql, params } = scanSessionsSql(scan, ACTIVITY_BUCKET);
    return (await query<SessionRow>(this.pool, numbered(sql), params)).map(sessionFromRow);
  }

  foreignChanges(): ForeignChanges {
    return this.foreign.take(this.notifications.connected);
  }

  // ——— writes ———

  /** Locks the keys' current sessions until their next commit, on the connection it will take (key-holds.ts). */
  hold(keys: readonly string[]): Promise<() => void> {
    return this.holds.hold(keys);
  }

  /**
   * The server going away fails the batch with STORE_UNAVAILABLE (`outcome: "unknown"` once COMMIT was
   * sent, else `"not-written"`); the next batch takes a fresh connection, so the store reconnects by itself.
   */
  async commit(groups: readonly WriteGroup[], durable: boolean): Promise<GroupOutcome[]> {
    // An item is another process's to take over while its owner has no heartbeat row.
    if (hasAdmission(groups))
      await this.owner.live().catch((error: unknown) => Promise.reject(unavailableWrite(error)));
    // Keys held for this commit: its transaction is open already, their sessions locked.
    const held = await this.holds.take(groups);
    const client = held ?? (await connect(this.pool));
    const begin = durable ? BEGIN_STRICT : BEGIN_RELAXED;
    let committing = false;
    let broken: unknown;
    try {
      if (durable && !held) {
        committing = true;
        try {
          const alone = await commitAlone(client, groups, this.writer);
          if (alone) return alone;
        } catch (error) {
          // Another process changed what the batch was planned on, or the statement failed: nothing was
          // written; the batch goes the longer way, counted.
          if (isConnectionError(error)) throw error;
          this.fallbacks.fellBack(error);
        }
        committing = false;
      }
      if (!held) await client.query(begin);
      else if (!durable) await client.query("SET LOCAL synchronous_commit = off");
      let outcomes: GroupOutcome[];
      try {
        outcomes = await commitFast(client, groups, this.writer);
      } catch (error) {
        if (isConnectionError(error)) throw error;
        this.fallbacks.fellBack(error);
        await client.query(`ROLLBACK; ${begin}`);
        outcomes = await commitCareful(client, groups, this.writer);
      }
      committing = true;
      await client.query("COMMIT");
      return outcomes;
    } catch (error) {
      if (isConnectionError(error)) {
        broken = error;
        throw unavailable(error, committing ? "unknown" : "not-written");
      }
      await client.query("ROLLBACK").catch((e: unknown) => {
        broken = e;
      });
      throw unavailableWrite(error);
    } finally {
      release(client, broken);
    }
  }

  /** Relaxed commits are on disk once a synchronous commit after them is: one with a transaction id. */
  async sync(): Promise<void> {
    await inTransaction(this.pool, (client: PoolClient) => client.query("SELECT pg_current_xact_id()")).catch(
      (error: unknown) => {
        throw isConnectionError(error) ? unavailable(error, "not-written") : unavailableWrite(error);
      },
    );
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stopListening?.();
    await this.notifications.close();
    await this.pool.end();
  }
}
