import { join } from "node:path";
import { LRUCache } from "lru-cache";
import type { SearchOptions } from "../../search/budget.js";
import { normaliseSearch, type SearchQuery, type SearchResult } from "../../search/query.js";
import type { SearchableStore } from "../../search/searchable.js";
import { checkStoreKey, type StoreEncryption, storeDriver } from "../encryption/store-encryption.js";
import { LogStore } from "../log-store.js";
import { chain } from "../maybe-promise.js";
import type { ErasedSender, Scrubbable, ScrubReport } from "../scrub.js";
import type { Durability, StoreCapabilities } from "../store.js";
import type { StoreInbox } from "../store-inbox.js";
import { type FileSystem, realFs } from "./durable-fs.js";
import { JsonlDriver } from "./jsonl-driver.js";
import { META_DIR } from "./meta-dir.js";
import type { JsonlIndexProgress } from "./search-rebuild.js";
import type { LineProblem } from "./session-file.js";
import { linkSnapshot, removeStaleSnapshots, type StoreSnapshot } from "./store-snapshot.js";

export { META_DIR } from "./meta-dir.js";
export type { JsonlIndexProgress } from "./search-rebuild.js";

export interface JsonlStoreOptions {
  /** The directory of session files. */
  path: string;
  /** `strict` (default): an append resolves once its lines are fsync'd. */
  durability?: Durability;
  /** How long a commit waits to gather appends; 0 (default): the next turn of the event loop. */
  commitIntervalMs?: number;
  /** The most write operations in one batch (default 2,000). */
  maxBatch?: number;
  /** Sessions whose entries are kept in memory after a read or write (default 1,000). */
  cacheSize?: number;
  /** …and the most bytes of their lines kept so (default 64 MiB). */
  cacheBytes?: number;
  /** Called for each unreadable line found in a session file (default: a process warning). */
  onProblem?: (problem: LineProblem) => void;
  /** The most bytes of problems `problems` keeps, the newest (default 1 MiB). */
  problemBytes?: number;
  /** The most bytes of appends waiting to be committed (default 64 MiB): more is refused with STORE_BUSY. */
  maxQueuedBytes?: number;
  /** The file layer (default node:fs); tests put one that injects faults here. */
  fs?: FileSystem;
  /** Keep the search index in `.sessiond/search.db` (default true); without it, `search` fails with SEARCH_UNAVAILABLE. */
  searchIndex?: boolean;
  /** Reports each step of the index's rebuild from the files (when it was missing, stale or damaged). */
  onIndexProgress?: (progress: JsonlIndexProgress) => void;
  /**
   * Encryption at rest (src/store/encryption/): entry bodies, titles and inbox rows sealed; file names
   * carry no title, and there is no search index (search answers SEARCH_UNAVAILABLE).
   */
  encryption?: StoreEncryption;
}

/**
 * Sessions as a directory of CrabTalk session files (behaviours.md §2), one file per session: the log
 * core over the JSONL driver (jsonl-driver.ts), which group-commits appends through a write-ahead journal.
 */
export class JsonlStore extends LogStore implements SearchableStore, Scrubbable {
  override readonly capabilities: StoreCapabilities = { search: true, inbox: true };
  readonly path: string;
  private readonly jsonl: JsonlDriver;
  /** The newest problems found, bounded by bytes (oldest dropped first). */
  private readonly problemLog: LRUCache<number, LineProblem>;

  constructor(options: JsonlStoreOptions) {
    const problemLog = new LRUCache<number, LineProblem>({
      max: 100_000,
      maxSize: options.problemBytes ?? 1024 * 1024,
      sizeCalculation: (p) => 64 + p.file.length + p.reason.length,
    });
    const onProblem =
      options.onProblem ??
      ((p: LineProblem) =>
        process.emitWarning(`${p.file} line ${p.line}: ${p.reason}`, { code: "SESSIOND_JSONL_LINE" }));
    let count = 0;
    let queued: () => number = () => 0;
    const driver = new JsonlDriver({
      path: options.path,
      durability: options.durability ?? "strict",
      fs: options.fs ?? realFs,
      cacheSize: options.cacheSize ?? 1000,
      cacheBytes: options.cacheBytes ?? 64 * 1024 * 1024,
      report: (problem) => {
        problemLog.set(count++, problem);
        onProblem(problem);
      },
      idle: () => queued() === 0,
      checkSealed: (sample) => checkStoreKey(options.path, options.encryption, sample),
      search:
        options.searchIndex === false || options.encryption
          ? false
          : options.onIndexProgress
            ? { onProgress: options.onIndexProgress }
            : {},
    });
    super(storeDriver(options.path, driver, options.encryption, undefined), options);
    if (options.encryption) this.capabilities = { inbox: true };
    queued = () => this.writer.queued;
    this.path = options.path;
    this.jsonl = driver;
    this.problemLog = problemLog;
    // A copy whose process stopped midway left its folder of links: they only hold disk space.
    removeStaleSnapshots(join(options.path, META_DIR));
  }

  /**
   * The inbox of admitted inputs, `.sessiond/inbox.jsonl`, written by this store's writer: an admission
   * shares the appends' batches, and a turn's end rides with its reply.
   */
  inbox(): StoreInbox {
    return this.driverInbox();
  }

  /** Messages whose text matches, best first (search-sidecar.ts). */
  search(query: SearchQuery, options?: SearchOptions): Promise<SearchResult> {
    return this.read(() =>
      chain(this.foreign(), () => this.jsonl.search(normaliseSearch(query, Date.now()), options)),
    );
  }

  /**
   * Erasure (src/lifecycle/subject-erasure.ts): after the keys' sessions were deleted, no byte of them
   * stays in the journal, inbox.jsonl or search.db (jsonl-driver.ts `scrub`).
   */
  async scrub(keys: readonly string[], senders: readonly ErasedSender[] = []): Promise<ScrubReport> {
    await this.flush();
    return {
      ...this.jsonl.scrub(keys, senders),
      method: "journal checkpoint + truncate, inbox.jsonl rewrite, search.db fts5 optimize + VACUUM",
    };
  }

  /** How far the rebuild of the search index from the files got. */
  searchProgress(): JsonlIndexProgress {
    return this.jsonl.searchProgress();
  }

  /** The newest problems found in the files (at most `problemBytes` of them), oldest first. */
  get problems(): LineProblem[] {
    const problems: LineProblem[] = [];
    for (const problem of this.problemLog.rvalues()) if (problem) problems.push(problem);
    return problems;
  }

  /** What memory holds of sessions' entries: how many sessions, and the bytes of their lines. */
  cacheStats(): { sessions: number; bytes: number } {
    return this.jsonl.cacheStats();
  }

  /**
   * The store's files as they are now, hard-linked with their lengths (store-snapshot.ts), for a consistent
   * copy while writes go on: synchronous, so no batch runs meanwhile, after the journal's bytes went out.
   */
  snapshot(): StoreSnapshot {
    this.jsonl.flush();
    return linkSnapshot(this.path);
  }

  /** How the last open found its sessions: from the index, or by reading the file. */
  indexStats(): { filesRead: number; filesFromIndex: number } {
    return { ...this.jsonl.stats };
  }
}
