import type { SearchOptions } from "../../search/budget.js";
import { normaliseSearch, type SearchQuery, type SearchResult } from "../../search/query.js";
import type { SearchableStore } from "../../search/searchable.js";
import type { IndexProgress } from "../../search/sqlite/search-index.js";
import type { StoreDriver } from "../driver.js";
import { searchSealed } from "../encryption/search-sealed.js";
import { type StoreEncryption, storeDriver } from "../encryption/store-encryption.js";
import { LogStore } from "../log-store.js";
import type { ErasedSender, Scrubbable, ScrubReport } from "../scrub.js";
import { type SessionRow, sessionFromRow } from "../sql/rows.js";
import type { Durability, StoreCapabilities } from "../store.js";
import type { StoreInbox } from "../store-inbox.js";
import { SearchBackfill } from "./search-backfill.js";
import { SqliteDriver } from "./sqlite-driver.js";
import { SQL } from "./sqlite-sql.js";

export { SQL };

export interface SqliteStoreOptions {
  path: string;
  /**
   * `strict` (default): an append resolves once it is on disk (the WAL fsync'd after the commit, off the
   * event loop). `relaxed`: synchronous=NORMAL, no fsync per commit.
   */
  durability?: Durability;
  /** How long a commit waits to gather appends; 0 (default) commits on the next turn of the event loop. */
  commitIntervalMs?: number;
  /** The most write operations in one transaction (default 2,000). */
  maxBatch?: number;
  /** How many sessions' current rows the writer keeps in memory (default 10,000). */
  sessionCacheSize?: number;
  /** How long to wait for another process's write lock before failing (default 5,000 ms). */
  busyTimeoutMs?: number;
  /** Fold the journal into `entries` once it holds this many rows (default 1,000). */
  foldThreshold?: number;
  /**
   * Batches of at least this many operations write through the journal (default 8); smaller ones
   * write straight into `entries`, where a row costs one write instead of two.
   */
  journalMinBatch?: number;
  /** Fold the journal after this long without writes (default 200 ms). */
  idleFoldMs?: number;
  /** The least time between two checkpoints of the checkpoint thread (default 200 ms). */
  checkpointIntervalMs?: number;
  /** How many bytes of active sessions' kept entries to hold in memory for context loads (default 16 MiB). */
  contextCacheBytes?: number;
  /**
   * SQLite's page cache, KiB (default 4,096; better-sqlite3's own default is 16,000). The kernel caches the
   * file too, and the session and context caches above hold what is read most, so a bigger one mostly
   * duplicates memory.
   */
  pageCacheKb?: number;
  /** The most bytes of appends waiting for the writer before appends fail with STORE_BUSY (default 64 MiB). */
  maxQueuedBytes?: number;
  /**
   * Writes on a thread of their own (default), or on the calling thread (`false`): every statement that
   * writes, the search indexing, the WAL's fsyncs and the checkpoints.
   */
  writerThread?: boolean;
  /** Reports each step of the background build of an upgraded database's search index. */
  onIndexProgress?: (progress: IndexProgress) => void;
  /** Encryption at rest (src/store/encryption/): entry bodies, titles and inbox rows sealed. */
  encryption?: StoreEncryption;
}

/**
 * The embedded default: one SQLite file in WAL mode (sqlite-driver.ts) under the log core. Reads go
 * straight to the file; every write goes through one group-commit writer.
 */
export class SqliteStore extends LogStore implements SearchableStore, Scrubbable {
  override readonly capabilities: StoreCapabilities = { search: true, inbox: true };
  /** Whether entry bodies are sealed (`encryption`). */
  readonly encrypted: boolean;
  readonly path: string;
  /** The driver, for tests that look at the file's connection and its fsyncs. */
  readonly sqlite: SqliteDriver;
  private readonly backfill: SearchBackfill;

  constructor(options: SqliteStoreOptions) {
    let stop: (error: unknown) => void = () => undefined;
    const driver = new SqliteDriver({
      path: options.path,
      durability: options.durability ?? "strict",
      busyTimeoutMs: options.busyTimeoutMs ?? 5000,
      pageCacheKb: options.pageCacheKb ?? 4096,
      foldThreshold: options.foldThreshold ?? 1000,
      journalMinBatch: options.journalMinBatch ?? 8,
      idleFoldMs: options.idleFoldMs ?? 200,
      checkpointIntervalMs: options.checkpointIntervalMs ?? 200,
      onFailure: (error) => stop(error),
      ...(options.writerThread === undefined ? {} : { writerThread: options.writerThread }),
    });
    let sealed: StoreDriver;
    try {
      const sample = driver.db.prepare(SQL.sealedSample).get() as SessionRow | undefined;
      sealed = storeDriver(options.path, driver, options.encryption, sample && sessionFromRow(sample));
    } catch (error) {
      void Promise.resolve(driver.close(false)).catch(() => undefined);
      throw error;
    }
    super(sealed, {
      ...options,
      ...(options.sessionCacheSize === undefined ? {} : { sessionCacheSize: options.sessionCacheSize }),
    });
    stop = (error) => this.writer.failStop(error);
    this.path = options.path;
    this.sqlite = driver;
    this.encrypted = options.encryption !== undefined;
    // Sealed bodies index nothing (the index reads message text): search answers SEARCH_UNAVAILABLE.
    if (this.encrypted) this.capabilities = { inbox: true };
    this.backfill = new SearchBackfill(
      driver.searchIndex.indexing,
      (sessions) => driver.backfillStep(sessions),
      options.onIndexProgress,
    );
  }

  /** Messages whose text matches, best first (search-index.ts). */
  search(query: SearchQuery, options?: SearchOptions): Promise<SearchResult> {
    if (this.encrypted) return Promise.reject(searchSealed(this.path));
    return this.read(() => this.sqlite.searchIndex.search(normaliseSearch(query, Date.now()), options));
  }

  /**
   * The inbox of admitted inputs, a table of this file written by this store's writer: an admission
   * shares the appends' transactions and fsyncs, and a turn's end commits with its reply.
   */
  inbox(): StoreInbox {
    return this.driverInbox();
  }

  /**
   * Erasure (src/lifecycle/subject-erasure.ts): after the keys' sessions were deleted, their inbox rows go
   * and the file is rewritten so no freed page, WAL frame or search segment keeps their bytes (scrub.ts).
   */
  async scrub(keys: readonly string[], senders: readonly ErasedSender[] = []): Promise<ScrubReport> {
    await this.flush();
    const counts = await this.sqlite.scrub(keys, senders);
    return {
      inboxRows: counts.inboxRows,
      searchTerms: counts.searchTerms,
      method: "fts5 optimize + VACUUM + wal_checkpoint(TRUNCATE)",
    };
  }

  /** How far the background build of the search index got. */
  searchProgress(): IndexProgress {
    return this.sqlite.searchIndex.progress();
  }

  override close(): Promise<void> {
    this.backfill.stop();
    return super.close();
  }
}
