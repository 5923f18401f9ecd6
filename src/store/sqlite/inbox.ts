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
import { MemoryInbox } from "../memory/inbox.js";
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

export interface SqliteInboxOptions {
  /** The store's database file: the inbox is its own table there, written through its own connection. */
  path: string;
  /** How long a write waits for the store's writer to let go of the file; default 5 s. */
  busyTimeoutMs?: number;
}

/**
 * The inbox as a table of the SQLite store's file, through a connection of its own (WAL, `synchronous =
 * FULL`): an admission returns once its transaction is on disk.
 */
export class SqliteInbox implements Inbox {
  readonly backend = "sqlite";
  private readonly db: Database.Database;
  /** Builds items exactly as the memory inbox does (id, JSON check). */
  private readonly planner = new MemoryInbox();
  private closed = false;

  constructor(options: SqliteInboxOptions) {
    this.db = new (sqliteDatabase())(options.path);
    this.db.pragma("journal_mode = WAL");
    this.db.pragma("synchronous = FULL");
    this.db.pragma(`busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs ?? 5000))}`);
    this.db.exec(SCHEMA);
  }

  async admit(input: AdmitInput): Promise<AdmitResult> {
    this.open();
    return this.db.transaction((): AdmitResult => {
      if (input.dedupeKey !== undefined) {
        const row = this.db.prepare("SELECT * FROM inbox WHERE dedupe_key = ?").get(input.dedupeKey) as
          | Row
          | undefined;
        if (row) return { item: itemOf(row), admitted: false };
      }
      const { item } = this.planner.planAdmit(input);
      this.db
        .prepare(
          "INSERT INTO inbox (id, key, envelope, dedupe_key, state, admitted_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        )
        .run(
          item.id,
          item.key,
          JSON.stringify(item.envelope),
          item.dedupeKey ?? null,
          item.state,
          item.admittedAt,
          item.updatedAt,
        );
      return { item, admitted: true };
    })();
  }

  async transition(id: string, state: InboxState, at: number, outcome?: InboxOutcome): Promise<boolean> {
    this.open();
    return this.db.transaction((): boolean => {
      const row = this.db.prepare("SELECT state FROM inbox WHERE id = ?").get(id) as
        | Pick<Row, "state">
        | undefined;
      if (!row || !canTransition(row.state, state)) return false;
      this.db
        .prepare("UPDATE inbox SET state = ?, updated_at = ?, outcome = coalesce(?, outcome) WHERE id = ?")
        .run(state, at, outcome ? JSON.stringify(outcome) : null, id);
      return true;
    })();
  }

  async get(id: string): Promise<InboxItem | undefined> {
    this.open();
    const row = this.db.prepare("SELECT * FROM inbox WHERE id = ?").get(id) as Row | undefined;
    return row && itemOf(row);
  }

  async unfinished(): Promise<InboxItem[]> {
    this.open();
    const rows = this.db
      .prepare("SELECT * FROM inbox WHERE state IN ('pending', 'running') ORDER BY id")
      .all() as Row[];
    return rows.map(itemOf);
  }

  async prune(before: number): Promise<number> {
    this.open();
    return this.db
      .prepare("DELETE FROM inbox WHERE state NOT IN ('pending', 'running') AND updated_at < ?")
      .run(before).changes;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.db.close();
  }

  private open(): void {
    if (this.closed) throw new SessiondError("STORE_CLOSED", "the inbox is closed");
  }
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
