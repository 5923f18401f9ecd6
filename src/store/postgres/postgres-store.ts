import type { Pool, PoolClient } from "pg";
import type { Entry, EntryInput, ResetCause } from "../../model/entry.js";
import { parseEntryInput } from "../../model/entry-schema.js";
import { SessiondError } from "../../model/errors.js";
import type { Session, SessionInit, StoredContext } from "../../model/session.js";
import { checkRange } from "../entry-range.js";
import { currentFence } from "../fence.js";
import { encodeCursor, normaliseQuery, normaliseScan } from "../session-query.js";
import { listSessionsSql, scanSessionsSql } from "../sqlite/list-sql.js";
import { type EntryRow, entryFromRow, type SessionRow, sessionFromRow } from "../sqlite/rows.js";
import type {
  AppendOptions,
  AppendResult,
  ArchiveResult,
  DeleteResult,
  Durability,
  EntryRange,
  ResetResult,
  SessionPage,
  SessionPatch,
  SessionQuery,
  SessionScan,
  Store,
} from "../store.js";
import { inputBytes, SMALL_WRITE_BYTES } from "../write-bytes.js";
import { type AppendRequest, commitAppends } from "./append-batch.js";
import { type ForeignAppend, listenForeignAppends } from "./append-notify.js";
import { PgInbox } from "./inbox.js";
import { PgLeases } from "./leases.js";
import * as maintenance from "./maintenance.js";
import { migrate } from "./migrate.js";
import { PgNotifications } from "./notifications.js";
import { openPool, query } from "./pool.js";
import { numbered } from "./sql.js";
import { PgWriter } from "./writer.js";

export interface PostgresStoreOptions {
  /** `postgresql://user@host:5432/db`, or a unix socket: `postgresql:///db?host=/run/postgresql`. */
  url: string;
  /** `strict` (default): acknowledged after a synchronous COMMIT; `relaxed`: `synchronous_commit = off`. */
  durability?: Durability;
  /** Connections in the pool; default 10. */
  poolSize?: number;
  /** The most bytes of appends waiting to be committed; default 64 MiB. */
  maxQueuedBytes?: number;
  /** How long a turn's lease on its key lasts unrenewed (a crashed process's lapses after it); default 30 s. */
  leaseTtlMs?: number;
}

type WriteRequest =
  | ({ kind: "append" } & AppendRequest)
  | { kind: "op"; run: (client: PoolClient) => Promise<unknown> };

/**
 * Sessions and entries in PostgreSQL, for several gateway processes on one database. Nothing is cached:
 * every read asks the server, and every write reads and locks the rows it changes inside its
 * transaction, so processes never work from stale state.
 */
export class PostgresStore implements Store {
  readonly backend = "postgres";
  readonly durability: Durability;
  private readonly writer: PgWriter<WriteRequest>;
  private closed = false;
  readonly notifications: PgNotifications;
  /** One turn per key across every process on this database (the engine's lanes take them). */
  readonly leases: PgLeases;

  private constructor(
    readonly pool: Pool,
    options: PostgresStoreOptions,
  ) {
    this.durability = options.durability ?? "strict";
    this.notifications = new PgNotifications(pool);
    this.leases = new PgLeases(pool, this.notifications, { ttlMs: options.leaseTtlMs });
    this.writer = new PgWriter<WriteRequest>(
      pool,
      (client, requests) => this.commit(client, requests),
      (r) => r.kind === "append",
      options.maxQueuedBytes,
    );
  }

  /** The inbox of admitted inputs, in this database, on this store's connections (closed with the store). */
  inbox(): PgInbox {
    return new PgInbox(this.pool);
  }

  /** Connects, applies the schema's migrations (refusing a newer schema) and opens the store. */
  static async open(options: PostgresStoreOptions): Promise<PostgresStore> {
    const pool = await openPool(options.url, options.poolSize ?? 10);
    try {
      await migrate(pool);
    } catch (error) {
      await pool.end().catch(() => {});
      throw error instanceof SessiondError
        ? error
        : new SessiondError("STORE_UNAVAILABLE", `PostgreSQL: ${String(error)}`, { cause: error });
    }
    return new PostgresStore(pool, options);
  }

  async append(key: string, inputs: EntryInput[], options?: AppendOptions): Promise<AppendResult> {
    this.assertOpen();
    const parsed = inputs.map(parseEntryInput);
    const fence = currentFence(key);
    const durable = (options?.durability ?? this.durability) === "strict";
    return this.writer.submit<AppendResult>(
      {
        kind: "append",
        key,
        inputs: parsed,
        init: options?.init,
        expectSessionId: options?.expectSessionId,
        fence,
      },
      durable,
      inputBytes(parsed),
    );
  }

  /**
   * Calls `listener` whenever another process commits entries (key and seq range only); for live views
   * across processes. Rejects when the server cannot be reached.
   */
  onForeignAppend(listener: (change: ForeignAppend) => void): Promise<() => void> {
    return listenForeignAppends(this.notifications, this.leases.holder, listener);
  }

  async getSession(key: string): Promise<Session | undefined> {
    return this.oneSession("SELECT * FROM sessions WHERE key = $1 AND state = 'active'", [key]);
  }

  async getSessionById(id: string): Promise<Session | undefined> {
    return this.oneSession("SELECT * FROM sessions WHERE id = $1", [id]);
  }

  async listSessions(q?: SessionQuery): Promise<SessionPage> {
    this.assertOpen();
    const normalised = normaliseQuery(q);
    const { sql, params } = listSessionsSql(normalised);
    const rows = await query<SessionRow>(this.pool, numbered(sql), params);
    const sessions = rows.slice(0, normalised.limit).map(sessionFromRow);
    const last = sessions.at(-1);
    return rows.length > normalised.limit && last
      ? { sessions, nextCursor: encodeCursor(normalised.sort, last) }
      : { sessions };
  }

  async generations(key: string): Promise<Session[]> {
    this.assertOpen();
    const rows = await query<SessionRow>(
      this.pool,
      "SELECT * FROM sessions WHERE key = $1 ORDER BY generation DESC",
      [key],
    );
    return rows.map(sessionFromRow);
  }

  async readEntries(sessionId: string, range?: EntryRange): Promise<Entry[]> {
    this.assertOpen();
    const r = checkRange(range);
    const order = r.order === "asc" ? "ASC" : "DESC";
    const rows = await query<EntryRow>(
      this.pool,
      `SELECT e.seq, e.id, e.ts, e.idem_key, e.data FROM entries e JOIN sessions s ON s.sid = e.sid
       WHERE s.id = $1 AND e.seq > $2 AND e.seq < $3 ORDER BY e.seq ${order} LIMIT $4`,
      [sessionId, r.afterSeq ?? 0, r.beforeSeq ?? 2 ** 31 - 1, r.limit ?? null],
    );
    return rows.map((row) => entryFromRow(sessionId, row));
  }

  async loadContext(key: string): Promise<StoredContext | undefined> {
    this.assertOpen();
    const rows = await query<SessionRow>(
      this.pool,
      "SELECT * FROM sessions WHERE key = $1 AND state = 'active'",
      [key],
    );
    const row = rows[0];
    if (!row) return undefined;
    const session = sessionFromRow(row);
    // Bounded by the session row read above: entries are immutable, so this is one consistent view.
    const entryRows = await query<EntryRow & { type: string }>(
      this.pool,
      `SELECT seq, id, ts, idem_key, data, type FROM entries WHERE sid = $1
       AND ((seq >= $2 AND seq <= $3 AND type <> 'compaction') OR seq = $4) ORDER BY seq`,
      [row.sid, session.contextFromSeq, session.entryCount, session.lastCompactionSeq ?? 0],
    );
    const context: StoredContext = { session, entries: [] };
    for (const entryRow of entryRows) {
      const entry = entryFromRow(session.id, entryRow);
      if (entry.seq === session.lastCompactionSeq && entry.type === "compaction") context.summary = entry;
      else if (entry.type !== "compaction") context.entries.push(entry);
    }
    return context;
  }

  async updateSession(key: string, patch: SessionPatch): Promise<Session> {
    return this.op((client) => maintenance.updateSession(client, key, patch));
  }

  async reset(key: string, cause: ResetCause, init?: SessionInit): Promise<ResetResult> {
    return this.op((client) => maintenance.reset(client, key, cause, init, Date.now()));
  }

  async archive(key: string, cause: ResetCause): Promise<ArchiveResult> {
    return this.op((client) => maintenance.archive(client, key, cause, Date.now()));
  }

  async delete(key: string): Promise<DeleteResult> {
    return this.op((client) => maintenance.deleteKey(client, key));
  }

  async deleteGeneration(sessionId: string): Promise<DeleteResult> {
    return this.op((client) => maintenance.deleteGeneration(client, sessionId));
  }

  async rekey(from: string, to: string): Promise<{ moved: number }> {
    return this.op((client) => maintenance.rekey(client, from, to, Date.now()));
  }

  async scanSessions(scan: SessionScan): Promise<Session[]> {
    this.assertOpen();
    const { sql, params } = scanSessionsSql(normaliseScan(scan));
    return (await query<SessionRow>(this.pool, numbered(sql), params)).map(sessionFromRow);
  }

  async flush(): Promise<void> {
    this.assertOpen();
    await this.writer.flush();
  }

  /** Relaxed commits are on disk once a synchronous commit after them is: one with a transaction id. */
  async sync(): Promise<void> {
    this.assertOpen();
    await this.writer.flush();
    await this.op((client) => client.query("SELECT pg_current_xact_id()"));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.writer.close();
    this.leases.close();
    await this.notifications.close();
    await this.pool.end();
  }

  private commit(client: PoolClient, requests: WriteRequest[]) {
    const first = requests[0];
    if (first?.kind === "op") {
      return first.run(client).then(
        (value) => [{ ok: true as const, value }],
        (error: unknown) => {
          throw error;
        },
      );
    }
    return commitAppends(client, requests as AppendRequest[], Date.now(), this.leases.holder);
  }

  private async op<T>(run: (client: PoolClient) => Promise<T>): Promise<T> {
    this.assertOpen();
    return this.writer.submit<T>({ kind: "op", run }, true, SMALL_WRITE_BYTES);
  }

  private async oneSession(sql: string, params: unknown[]): Promise<Session | undefined> {
    this.assertOpen();
    const row = (await query<SessionRow>(this.pool, sql, params))[0];
    return row && sessionFromRow(row);
  }

  private assertOpen(): void {
    if (this.closed) throw new SessiondError("STORE_CLOSED", "the store is closed");
  }
}
