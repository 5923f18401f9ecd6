import type { Pool } from "pg";
import { SessiondError } from "../../model/errors.js";
import type { SearchOptions } from "../../search/budget.js";
import { normaliseSearch, type SearchQuery, type SearchResult } from "../../search/query.js";
import type { SearchableStore } from "../../search/searchable.js";
import { derivedKey } from "../encryption/envelope.js";
import { searchSealed } from "../encryption/search-sealed.js";
import { checkStoreKey, type StoreEncryption, storeDriver } from "../encryption/store-encryption.js";
import { LogStore } from "../log-store.js";
import type { ErasedSender, Scrubbable, ScrubReport } from "../scrub.js";
import { type SessionRow, sessionFromRow } from "../sql/rows.js";
import type { Durability, StoreCapabilities } from "../store.js";
import { type ForeignAppend, listenForeignAppends } from "./append-notify.js";
import type { BatchFallback, BatchFallbackStats, BatchFallbacks } from "./batch-fallbacks.js";
import { PgInbox } from "./inbox.js";
import { InboxOwner } from "./inbox-owners.js";
import type { PgDriverInbox } from "./inbox-rows.js";
import { PgLeases } from "./leases.js";
import { migrate } from "./migrate.js";
import { PgNotifications } from "./notifications.js";
import { openPool, query } from "./pool.js";
import { PostgresDriver } from "./postgres-driver.js";
import { searchPostgres } from "./search.js";
import { SearchReindex } from "./search-reindex.js";

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
  /** Told of the first batch that fell back to a slower path (default: a process warning); all are counted. */
  onBatchFallback?: (fallback: BatchFallback) => void;
  /**
   * Encryption at rest (src/store/encryption/): entry bodies, titles and inbox rows sealed (PgInbox's own
   * reads and transitions through the driver inbox's key); search answers SEARCH_UNAVAILABLE.
   */
  encryption?: StoreEncryption;
}

/**
 * Sessions and entries in PostgreSQL, for several gateway processes on one database: the log core over
 * postgres-driver.ts, plus what only a shared database has: leases (one turn per key across processes),
 * the inbox of admitted inputs, and other processes' appends as they commit.
 */
export class PostgresStore extends LogStore implements SearchableStore, Scrubbable {
  override readonly capabilities: StoreCapabilities = {
    search: true,
    inbox: true,
    leases: true,
    foreignAppends: true,
  };
  /** One turn per key across every process on this database (the engine's lanes take them). */
  readonly leases: PgLeases;
  private readonly fallbacks: BatchFallbacks;
  /** This process's heartbeat as an owner of inbox items (each `inbox()` shares it). */
  private readonly inboxOwner: InboxOwner;
  /** The inbox table's reads (the driver's). */
  private readonly driverInboxRows: PgDriverInbox;
  /** Entries of an upgraded database whose search words are folded again (migration 6). */
  private readonly reindex: SearchReindex;

  private constructor(
    readonly pool: Pool,
    readonly notifications: PgNotifications,
    leases: PgLeases,
    inboxOwner: InboxOwner,
    driver: PostgresDriver,
    options: PostgresStoreOptions,
    reindex: boolean,
  ) {
    super(storeDriver("PostgreSQL", driver, options.encryption, undefined), {
      durability: options.durability ?? "strict",
      ...(options.maxQueuedBytes === undefined ? {} : { maxQueuedBytes: options.maxQueuedBytes }),
    });
    this.leases = leases;
    this.fallbacks = driver.fallbacks;
    this.inboxOwner = inboxOwner;
    this.driverInboxRows = driver.inbox;
    this.reindex = new SearchReindex(pool);
    if (options.encryption) this.capabilities = { inbox: true, leases: true, foreignAppends: true };
    if (reindex) this.reindex.start();
  }
  /**
   * Erasure (src/lifecycle/subject-erasure.ts): the keys' inbox rows are deleted. PostgreSQL keeps deleted
   * rows' bytes in its pages until VACUUM reuses them and in its WAL until recycled: the README says so.
   */
  async scrub(keys: readonly string[], senders: readonly ErasedSender[] = []): Promise<ScrubReport> {
    await this.flush();
    const result = await this.pool.query(
      `DELETE FROM inbox WHERE key = ANY($1::text[]) OR EXISTS (
        SELECT 1 FROM unnest($2::text[], $3::text[]) AS s(channel, sender)
        WHERE lower(envelope->'sender'->>'id') = s.sender AND (s.channel = '*' OR lower(envelope->>'channel') = s.channel))`,
      [[...keys], senders.map((s) => s.channel), senders.map((s) => s.senderId)],
    );
    return {
      inboxRows: result.rowCount ?? 0,
      searchTerms: 0,
      method: "rows deleted (VACUUM frees the pages)",
    };
  }

  /** Connects, applies the schema's migrations (refusing a newer schema) and opens the store. */
  static async open(options: PostgresStoreOptions): Promise<PostgresStore> {
    const pool = await openPool(options.url, options.poolSize ?? 10);
    const notifications = new PgNotifications(pool);
    try {
      await migrate(pool);
      const leases = new PgLeases(pool, notifications, { ttlMs: options.leaseTtlMs });
      const owner = new InboxOwner(pool, leases.holder, leases.ttlMs);
      const driver = new PostgresDriver(pool, notifications, leases.holder, owner, options.onBatchFallback);
      const sample = await query<SessionRow>(
        pool,
        "SELECT * FROM sessions WHERE data_key IS NOT NULL LIMIT 1",
      );
      checkStoreKey("PostgreSQL", options.encryption, sample[0] && sessionFromRow(sample[0]));
      if (options.encryption) driver.inbox.sealWith(derivedKey(options.encryption.key, "inbox"));
      await driver.listen();
      const reindex = await SearchReindex.pending(pool);
      return new PostgresStore(pool, notifications, leases, owner, driver, options, reindex);
    } catch (error) {
      await notifications.close();
      await pool.end().catch(() => {});
      throw error instanceof SessiondError
        ? error
        : new SessiondError("STORE_UNAVAILABLE", `PostgreSQL: ${String(error)}`, { cause: error });
    }
  }

  /** How many batches fell back from the one-statement path (or the few-statements one), and the first's error. */
  batchFallbacks(): BatchFallbackStats {
    return this.fallbacks.snapshot();
  }

  /** Messages whose text matches, best first (search.ts). */
  async search(query: SearchQuery, options?: SearchOptions): Promise<SearchResult> {
    if (this.capabilities.search !== true) throw searchSealed("PostgreSQL");
    const indexing = this.reindex.running;
    const result = await this.read(() =>
      searchPostgres(this.pool, normaliseSearch(query, Date.now()), options),
    );
    return indexing ? { ...result, indexing } : result;
  }

  /** Resolves once this process has re-indexed what an upgrade left to it (migration 6), if anything. */
  searchReindexed(): Promise<void> {
    return this.reindex.finished();
  }

  /**
   * The inbox of admitted inputs, in this database, written by this store's writer (an admission shares a
   * batch's statement with other turns' appends, and a turn's input and reply can carry its admission and
   * end: `AppendOptions.inbox`); closed with the store. This process owns what it admits while its
   * heartbeat, renewed as often as a lease, lives.
   */
  inbox(): PgInbox {
    return new PgInbox(this, this.driverInboxRows, this.writer, this.pool, this.inboxOwner);
  }

  /**
   * Calls `listener` whenever another process commits entries (key and seq range only); for live views
   * across processes. Rejects when the server cannot be reached.
   */
  onForeignAppend(listener: (change: ForeignAppend) => void): Promise<() => void> {
    return listenForeignAppends(this.notifications, this.leases.holder, listener);
  }

  override async close(): Promise<void> {
    await this.reindex.stop();
    this.leases.close();
    await this.inboxOwner.close();
    await super.close();
  }
}
