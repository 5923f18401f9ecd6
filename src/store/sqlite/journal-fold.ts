import type Database from "better-sqlite3";
import { isSessiondError, SessiondError } from "../../model/errors.js";
import type { SqliteSearchIndex } from "../../search/sqlite/search-index.js";
import type { Statements } from "../sql/sqlite-statements.js";
import { isConstraintError, SQL } from "./sqlite-sql.js";

export interface JournalFoldOptions {
  path: string;
  /** Fold once the journal holds this many rows. */
  foldThreshold: number;
  /** …or after this long without writes. */
  idleFoldMs: number;
  /** Called after a fold committed on its own (the WAL has something new to sync). */
  committed: () => void;
  /** Runs a fold's transaction of its own (the writer counts its commits). */
  counted: <T>(run: () => T) => T;
  /** The search index, whose rows not in the FTS indexes yet are taken in by every fold. */
  search: Pick<SqliteSearchIndex, "pending" | "pendingChars" | "indexStep" | "forgetWords">;
}

/** Text waiting to be indexed past which each batch takes a step of the search index too, characters. */
const INDEX_BACKLOG_CHARS = 1024 * 1024;

/**
 * The `journal` table of a SQLite store: busy batches append there in arrival order, and a fold moves the
 * rows into `entries` in key order (one pass instead of a page per session per commit), inside a batch
 * once the journal is full, or on its own once writes have gone quiet. A fold also takes the search rows
 * appended since the last into the FTS indexes (a slice of them at a time, one segment a slice), and
 * happens as well once there are as many of those; an idle fold that leaves rows runs again at once.
 */
export class JournalFold {
  /** Rows written to the journal since the last fold (approximate: other processes write too). */
  rows: number;
  /** Set when a fold found duplicate entries: every write is refused with it. */
  corrupt: SessiondError | undefined;
  private idleFold: NodeJS.Timeout | undefined;
  private lastWriteAt = 0;
  private closed = false;
  private readonly foldTransaction: Database.Transaction<() => void>;

  constructor(
    db: Database.Database,
    private readonly sql: Statements,
    private readonly savepoint: Database.Transaction<(run: () => void) => void>,
    private readonly options: JournalFoldOptions,
  ) {
    this.rows = (sql.get(SQL.journalSize).get() as { n: number }).n;
    this.foldTransaction = db.transaction(() => this.foldJournal());
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.idleFold);
  }

  foldIfFull(): void {
    if (!this.due(this.options.foldThreshold)) {
      // Big texts: the search index keeps up a step a batch, rather than taking them all once writes go
      // quiet (by then hundreds of megabytes may wait, and the idle process works through them).
      if (this.options.search.pendingChars >= INDEX_BACKLOG_CHARS) this.indexStep();
      return;
    }
    try {
      this.savepoint(() => this.foldJournal());
    } catch (error) {
      this.options.search.forgetWords();
      // A duplicate makes the store refuse writes from the next commit on (foldJournal recorded it);
      // anything else leaves the rows in the journal, where readers find them, for the next batch.
      if (isSessiondError(error, "STORE_CORRUPT")) return;
    }
  }

  /** A step of the search index inside the batch; one that fails leaves its rows for the next. */
  private indexStep(): void {
    try {
      this.savepoint(() => this.options.search.indexStep());
    } catch {
      // Left for the next step (what this process knows of the words written is forgotten with it); a
      // search reads rows not indexed yet itself.
      this.options.search.forgetWords();
    }
  }

  /** A fold of its own (idle, or at close): one IMMEDIATE transaction. */
  fold(): void {
    this.options.counted(() => this.foldTransaction.immediate());
    this.options.committed();
  }

  /** Moves the journal into `entries`, in key order. */
  private foldJournal(): void {
    const { n, last } = this.sql.get(SQL.journalSize).get() as { n: number; last: number | null };
    if (n > 0 && last !== null) {
      try {
        this.sql.get(SQL.foldInto).run(last);
      } catch (error) {
        if (!isConstraintError(error)) throw error;
        throw this.foundDuplicates(error);
      }
      this.sql.get(SQL.foldDelete).run(last);
    }
    this.rows = 0;
    // Slices of the search rows for a few ms: a fold's work stays bounded however much text came in.
    this.options.search.indexStep();
  }

  /** Whether the journal or the search rows not indexed yet hold at least `rows`. */
  private due(rows: number): boolean {
    return this.rows >= rows || this.options.search.pending >= rows;
  }

  /**
   * A fold that finds an entry in both tables (two processes numbered the same seq, before schema v2):
   * the log is ambiguous, so the store refuses writes from then on, naming what it found; reads go on.
   */
  private foundDuplicates(error: unknown): SessiondError {
    const found = this.sql.get(SQL.duplicated).get() as
      | { id: string; seq: number; idem_key: string | null }
      | undefined;
    const what = found
      ? `session ${found.id} has entry ${found.seq}${found.idem_key === null ? "" : ` or idempotency key ${JSON.stringify(found.idem_key)}`} twice`
      : "an entry is stored twice";
    this.corrupt ??= new SessiondError(
      "STORE_CORRUPT",
      `the database holds duplicate entries (${this.options.path}): ${what}; it refuses writes until repaired`,
      { cause: error, ...(found ? { details: { sessionId: found.id, seq: found.seq } } : {}) },
    );
    return this.corrupt;
  }

  /** One timer, pushed back by activity rather than re-armed on every commit. */
  scheduleIdleFold(): void {
    this.lastWriteAt = performance.now();
    if (this.idleFold || !this.due(1) || this.closed) return;
    const check = () => {
      const quiet = performance.now() - this.lastWriteAt;
      if (quiet < this.options.idleFoldMs) {
        this.idleFold = setTimeout(check, this.options.idleFoldMs - quiet).unref();
        return;
      }
      this.idleFold = undefined;
      if (!this.due(1) || this.closed || this.corrupt) return;
      try {
        this.fold();
      } catch {
        // Left in the journal for the next fold; readers find the rows there.
        this.options.search.forgetWords();
        return;
      }
      // Search rows left by the fold's slice: the next slice once the event loop has run.
      if (this.due(1)) this.idleFold = setTimeout(check, 0).unref();
    };
    this.idleFold = setTimeout(check, this.options.idleFoldMs).unref();
  }
}
