import { SessiondError } from "../../model/errors.js";
import type { SearchOptions } from "../../search/budget.js";
import type { NormalisedSearch, SearchResult } from "../../search/query.js";
import type { GroupOutcome, WriteGroup } from "../driver.js";
import { messageOf } from "../group-commit.js";
import type { ChangeWatch } from "./change-watch.js";
import { asStoreError } from "./directory-error.js";
import type { FileSystem } from "./durable-fs.js";
import type { FileReads } from "./file-reads.js";
import type { JsonlIndexProgress } from "./search-rebuild.js";
import { JsonlSearchIndex } from "./search-sidecar.js";
import type { SessionFiles } from "./session-files.js";

/** How the JSONL driver keeps its search index: `false` for none. */
export type JsonlSearchOption = false | { onProgress?: (progress: JsonlIndexProgress) => void };

/**
 * The JSONL driver's search: its sidecar index (search-sidecar.ts), or why it has none, which every search
 * then throws. The files that change events named since the last search are compared first, so what
 * another process appended is indexed and its keys reach the core (`takeChangedKeys`).
 */
export class DriverSearch {
  private readonly index: JsonlSearchIndex | SessiondError;
  /** Keys whose files a search found changed by another process: the core drops them at its next ask. */
  private readonly changedKeys = new Set<string>();

  constructor(
    private readonly path: string,
    metaDir: string,
    private readonly files: SessionFiles,
    private readonly reads: FileReads,
    private readonly changes: ChangeWatch,
    fs: FileSystem,
    idle: () => boolean,
    option: JsonlSearchOption,
  ) {
    this.index = open(path, metaDir, files, reads, fs, idle, option);
  }

  /** The groups of a batch that committed (`outcomes` say which): queued for the index. */
  committed(groups: readonly WriteGroup[], outcomes: readonly GroupOutcome[]): void {
    if (this.index instanceof JsonlSearchIndex)
      this.index.committed(groups.filter((_, i) => outcomes[i]?.ok));
  }

  /** The keys of files a search found changed by another process since the last call. */
  takeChangedKeys(): string[] {
    const keys = [...this.changedKeys];
    this.changedKeys.clear();
    return keys;
  }

  /** Messages whose text matches, best first (search-sidecar.ts). */
  search(q: NormalisedSearch, options?: SearchOptions): Promise<SearchResult> {
    const index = this.index;
    if (!(index instanceof JsonlSearchIndex)) throw index;
    if (index.owner) {
      const named = this.changes.takeNamed();
      const files = named === "all" ? [...this.files.all()] : [...named].map((f) => this.files.byFileName(f));
      for (const tracked of files) {
        if (!tracked) continue;
        try {
          if (this.reads.refresh(tracked)) this.changedKeys.add(tracked.session.key);
        } catch {
          // A file that cannot be read now is compared again at the next search.
        }
      }
    }
    try {
      return index.search(q, options).catch((error: unknown) => {
        throw asStoreError(error, this.path);
      });
    } catch (error) {
      throw asStoreError(error, this.path);
    }
  }

  progress(): JsonlIndexProgress {
    if (!(this.index instanceof JsonlSearchIndex)) throw this.index;
    return this.index.progress();
  }

  /** Erasure: the index file keeps no byte of deleted sessions (search-sidecar.ts); words dropped. */
  scrub(): number {
    return this.index instanceof JsonlSearchIndex ? this.index.scrub() : 0;
  }

  /** The index is vouched for at close only when the files hold everything (`clean`). */
  close(clean: boolean): void {
    if (!(this.index instanceof JsonlSearchIndex)) return;
    try {
      this.index.close(clean);
    } catch {
      // Without its close record, the next open builds the index again from the files.
    }
  }
}

function open(
  path: string,
  metaDir: string,
  files: SessionFiles,
  reads: FileReads,
  fs: FileSystem,
  idle: () => boolean,
  option: JsonlSearchOption,
): JsonlSearchIndex | SessiondError {
  if (option === false)
    return new SessiondError("SEARCH_UNAVAILABLE", "the jsonl store was opened without its search index");
  try {
    const index = new JsonlSearchIndex(path, metaDir, files, reads, fs, idle, option.onProgress);
    reads.onReread = (tracked) => index.stale(tracked.session.id);
    return index;
  } catch (error) {
    return new SessiondError(
      "SEARCH_UNAVAILABLE",
      `the search index of ${path} could not be opened: ${messageOf(error)}`,
      { cause: error },
    );
  }
}
