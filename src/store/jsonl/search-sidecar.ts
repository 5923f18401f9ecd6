import { SessiondError } from "../../model/errors.js";
import { SEARCH_BUDGET_MS, type SearchOptions } from "../../search/budget.js";
import type { NormalisedSearch, SearchResult } from "../../search/query.js";
import type { WriteGroup } from "../driver.js";
import { isDamagedError } from "../sql/sqlite-statements.js";
import type { FileSystem } from "./durable-fs.js";
import type { FileReads } from "./file-reads.js";
import { type JsonlIndexProgress, SearchRebuild } from "./search-rebuild.js";
import { SearchTables } from "./search-tables.js";
import { SearchWrites } from "./search-writes.js";
import type { SessionFiles } from "./session-files.js";

/**
 * The JSONL store's search index: a SQLite file beside the session files (`.sessiond/search.db`), on
 * which the SQLite store's index (search-index.ts) runs unchanged, so both rank and filter alike. What
 * committed batches change is written in bulk (search-writes.ts); what the index holds is checked against
 * the files at open and rebuilt from them where it is stale or damaged (search-rebuild.ts). A commit only
 * queues its changes: they are written after the batch is acknowledged, in bounded steps, and a search
 * first catches up with them within half its time budget (else its result says `complete: false`).
 */
export class JsonlSearchIndex {
  private readonly tables: SearchTables;
  private readonly writes: SearchWrites;
  private readonly rebuild: SearchRebuild;

  constructor(
    dir: string,
    metaDir: string,
    private readonly files: SessionFiles,
    reads: FileReads,
    fs: FileSystem,
    idle: () => boolean,
    onProgress: ((progress: JsonlIndexProgress) => void) | undefined,
  ) {
    this.tables = new SearchTables(metaDir, fs);
    this.writes = new SearchWrites(this.tables, files, idle, {
      writeFailed: (sessions, error) => this.rebuild.writeFailed(sessions, error),
      stale: (id) => this.rebuild.stale(id),
      waits: (id) => this.rebuild.waits(id),
    });
    this.rebuild = new SearchRebuild(dir, this.tables, this.writes, files, reads, fs, onProgress);
    this.rebuild.open();
  }

  get owner(): boolean {
    return this.tables.owner;
  }

  progress(): JsonlIndexProgress {
    return this.rebuild.progress();
  }

  /** The changes of a batch whose frame is in the journal (groups that committed): queued, not written. */
  committed(groups: readonly WriteGroup[]): void {
    this.writes.committed(groups);
  }

  /** Another process changed the session's file (read again): its rows are built again from it. */
  stale(sessionId: string): void {
    this.rebuild.stale(sessionId);
  }

  async search(q: NormalisedSearch, options?: SearchOptions): Promise<SearchResult> {
    let budgetMs = options?.budgetMs ?? SEARCH_BUDGET_MS;
    let caughtUp = true;
    if (this.tables.owner) {
      const start = performance.now();
      caughtUp = await this.writes.catchUp(start + budgetMs / 2);
      if (this.tables.closed)
        throw new SessiondError("STORE_CLOSED", "the store was closed during the search");
      this.rebuild.catchUp();
      budgetMs = Math.max(0, budgetMs - (performance.now() - start));
    }
    let result: SearchResult;
    try {
      result = await this.tables.index.search(q, { ...options, budgetMs });
    } catch (error) {
      if (!isDamagedError(error)) throw error;
      this.rebuild.recover();
      return { hits: [], indexing: true, complete: false };
    }
    // Another process may have deleted a session the index still holds.
    const hits = result.hits.filter((hit) => this.files.get(hit.sessionId) !== undefined);
    return {
      ...result,
      hits,
      indexing: this.rebuild.indexing() || !caughtUp,
      complete: result.complete && caughtUp,
    };
  }

  /** Erasure: what waits is written (deleted sessions' rows go), then the file keeps no freed byte. */
  scrub(): number {
    if (!this.tables.owner || this.tables.closed) return 0;
    this.writes.flush();
    return this.tables.scrub();
  }

  /**
   * Gives up the index: what waits is written and the size and mtime of the files written this run are
   * recorded, then (`clean`) the file is made durable and vouched for by the close record.
   */
  close(clean: boolean): void {
    if (this.tables.closed) return;
    this.writes.cancel();
    this.rebuild.cancel();
    let whole = clean;
    if (clean && this.tables.owner) {
      try {
        this.writes.flush();
        this.rebuild.measureWritten();
      } catch {
        whole = false;
      }
    }
    this.tables.close(whole);
  }
}
