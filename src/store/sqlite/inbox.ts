import type Database from "better-sqlite3";
import { SessiondError } from "../../model/errors.js";
import type {
  AdmitInput,
  AdmitResult,
  Inbox,
  InboxItem,
  InboxOutcome,
  InboxState,
} from "../../model/inbox.js";
import { canTransition } from "../../model/inbox.js";
import { type BatchResult, GroupCommit } from "../group-commit.js";
import { jsonText, pendingItem } from "../memory/inbox.js";
import { sqliteDatabase } from "./better-sqlite3.js";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS inbox (
  id TEXT PRIMARY KEY,
  key TEXT NOT NULL,
  envelope TEXT NOT NULL,
  dedupe_key TEXT UNIQUE,
  state TEXT NOT NULL,
  admitted_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  outcome TEXT
);
CREATE INDEX IF NOT EXISTS inbox_unfinished ON inbox (id) WHERE state IN ('pending', 'running');
`;

interface Row {
  id: string;
  key: string;
  envelope: string;
  dedupe_key: string | null;
  state: InboxState;
  admitted_at: number;
  updated_at: number;
  outcome: string | null;
}

/** The store's connection, lent to the inbox (SqliteDriver). */
export interface InboxConnection {
  readonly db: Database.Database;
  /** Runs `write` in one transaction of the store's connection; `durable`: on disk by the barrier. */
  transact<T>(write: () => T, durable: boolean): T;
  /** Resolves once every commit before the call is on disk (the WAL's fsync off the event loop). */
  readonly durableBarrier?: () => Promise<void>;
}

export type SqliteInboxOptions =
  | {
      /** The store's database file: the inbox is its own table there, written through its own connection. */
      path: string;
      /** How long a write waits for the store's writer to let go of the file; default 5 s. */
      busyTimeoutMs?: number;
    }
  | {
      /** The store's own connection (`SqliteStore.inbox()`): see the class comment. */
      connection: InboxConnection;
    };

/**
 * The inbox as a table of the SQLite store's file. The writes of one turn of the event loop commit as one
 * transaction (a group commit, as the store's appends do), and an admission resolves once its transaction
 * is on disk.
 *
 * Beside a `SqliteStore` (`store.inbox()`, what the engine uses) it writes through the store's connection
 * and shares its WAL fsync off the event loop: a commit of another connection changes the file's
 * `data_version`, which the store must read as another process's write and drop its caches for, on every
 * turn. On a path of its own (tools, tests) it opens a connection with `synchronous = FULL`.
 */
export class SqliteInbox implements Inbox {
  readonly backend = "sqlite";
  private readonly db: Database.Database;
  private readonly owned: boolean;
  private readonly writer: GroupCommit<() => unknown>;
  private readonly statements = new Map<string, Database.Statement>();
  private closed = false;

  constructor(options: SqliteInboxOptions) {
    let transact: InboxConnection["transact"];
    let barrier: (() => Promise<void>) | undefined;
    if ("connection" in options) {
      this.db = options.connection.db;
      this.owned = false;
      transact = (write, durable) => options.connection.transact(write, durable);
      barrier = options.connection.durableBarrier;
    } else {
      this.db = new (sqliteDatabase())(options.path);
      this.owned = true;
      this.db.pragma("journal_mode = WAL");
      this.db.pragma("synchronous = FULL");
      this.db.pragma(`busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs ?? 5000))}`);
      transact = (write) => this.db.transaction(write).immediate();
    }
    this.db.exec(SCHEMA);
    this.writer = new GroupCommit<() => unknown>((ops, durable) => transact(() => runAll(ops), durable), {
      intervalMs: 0,
      maxBatch: 2000,
      ...(barrier ? { durableBarrier: barrier } : {}),
    });
  }

  admit(input: AdmitInput): Promise<AdmitResult> {
    return this.write((): AdmitResult => {
      if (input.dedupeKey !== undefined) {
        const row = this.sql("SELECT * FROM inbox WHERE dedupe_key = ?").get(input.dedupeKey) as
          | Row
          | undefined;
        if (row) return { item: itemOf(row), admitted: false };
      }
      const envelope = jsonText(input.envelope);
      const item = pendingItem(input, JSON.parse(envelope) as InboxItem["envelope"]);
      this.sql(
        "INSERT INTO inbox (id, key, envelope, dedupe_key, state, admitted_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
      ).run(item.id, item.key, envelope, item.dedupeKey ?? null, item.state, item.admittedAt, item.updatedAt);
      return { item, admitted: true };
    }, true);
  }

  /**
   * Not made durable on its own (it rides on the next fsync of the file): a lost end state is settled
   * again at start-up from the session's entries (recovery.ts).
   */
  transition(id: string, state: InboxState, at: number, outcome?: InboxOutcome): Promise<boolean> {
    return this.write((): boolean => {
      const row = this.sql("SELECT state FROM inbox WHERE id = ?").get(id) as Pick<Row, "state"> | undefined;
      if (!row || !canTransition(row.state, state)) return false;
      this.sql("UPDATE inbox SET state = ?, updated_at = ?, outcome = coalesce(?, outcome) WHERE id = ?").run(
        state,
        at,
        outcome ? JSON.stringify(outcome) : null,
        id,
      );
      return true;
    }, false);
  }

  async get(id: string): Promise<InboxItem | undefined> {
    this.open();
    await this.writer.flush();
    const row = this.sql("SELECT * FROM inbox WHERE id = ?").get(id) as Row | undefined;
    return row && itemOf(row);
  }

  async unfinished(): Promise<InboxItem[]> {
    this.open();
    await this.writer.flush();
    const rows = this.sql(
      "SELECT * FROM inbox WHERE state IN ('pending', 'running') ORDER BY id",
    ).all() as Row[];
    return rows.map(itemOf);
  }

  prune(before: number): Promise<number> {
    return this.write(
      () =>
        this.sql("DELETE FROM inbox WHERE state NOT IN ('pending', 'running') AND updated_at < ?").run(before)
          .changes,
      false,
    );
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.writer.close();
    this.statements.clear();
    if (this.owned) this.db.close();
  }

  private write<T>(run: () => T, durable: boolean): Promise<T> {
    if (this.closed) return Promise.reject(closedError());
    return this.writer.submit<T>(run, durable);
  }

  private sql(text: string): Database.Statement {
    let statement = this.statements.get(text);
    if (!statement) {
      statement = this.db.prepare(text);
      this.statements.set(text, statement);
    }
    return statement;
  }

  private open(): void {
    if (this.closed) throw closedError();
  }
}

/** Each write of a batch in turn; one that throws fails alone (SQLite undoes its statement). */
function runAll(ops: ReadonlyArray<() => unknown>): BatchResult[] {
  return ops.map((op): BatchResult => {
    try {
      return { ok: true, value: op() };
    } catch (error) {
      return { ok: false, error };
    }
  });
}

function closedError(): SessiondError {
  return new SessiondError("STORE_CLOSED", "the inbox is closed");
}

function itemOf(row: Row): InboxItem {
  return {
    id: row.id,
    key: row.key,
    envelope: JSON.parse(row.envelope) as InboxItem["envelope"],
    ...(row.dedupe_key !== null ? { dedupeKey: row.dedupe_key } : {}),
    state: row.state,
    admittedAt: row.admitted_at,
    updatedAt: row.updated_at,
    ...(row.outcome !== null ? { outcome: JSON.parse(row.outcome) as InboxOutcome } : {}),
  };
}
