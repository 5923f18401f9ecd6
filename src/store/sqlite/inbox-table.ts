import type Database from "better-sqlite3";
import type { InboxItem, InboxOutcome, InboxState } from "../../model/inbox.js";
import type { DriverInbox, InboxWrite } from "../driver.js";

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

const SQL = {
  get: "SELECT * FROM inbox WHERE id = ?",
  stateOf: "SELECT state FROM inbox WHERE id = ?",
  byDedupe: "SELECT * FROM inbox WHERE dedupe_key = ?",
  unfinished: "SELECT * FROM inbox WHERE state IN ('pending', 'running') ORDER BY id",
  insert: `INSERT INTO inbox (id, key, envelope, dedupe_key, state, admitted_at, updated_at)
    VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
  // The states `canTransition` (model/inbox.ts) moves on from: an end state never changes, nor running twice.
  end: `UPDATE inbox SET state = ?, updated_at = ?, outcome = coalesce(?, outcome)
    WHERE id = ? AND state IN ('pending', 'running') AND NOT (state = 'running' AND ? = 'running')`,
  prune: "DELETE FROM inbox WHERE state NOT IN ('pending', 'running') AND updated_at < ?",
} as const;

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

/** The inbox as a table of the store's SQLite file: written inside the store's transactions. */
export class InboxTable implements DriverInbox {
  private readonly statements = new Map<string, Database.Statement>();

  constructor(private readonly db: Database.Database) {
    db.exec(SCHEMA);
  }

  get(id: string): InboxItem | undefined {
    const row = this.sql(SQL.get).get(id) as Row | undefined;
    return row && itemOf(row);
  }

  /** An item's state, without reading its envelope (what a transition checks). */
  stateOf(id: string): InboxState | undefined {
    return this.sql(SQL.stateOf).pluck().get(id) as InboxState | undefined;
  }

  byDedupeKey(dedupeKey: string): InboxItem | undefined {
    const row = this.sql(SQL.byDedupe).get(dedupeKey) as Row | undefined;
    return row && itemOf(row);
  }

  unfinished(): InboxItem[] {
    return (this.sql(SQL.unfinished).all() as Row[]).map(itemOf);
  }

  prune(before: number): number {
    return this.sql(SQL.prune).run(before).changes;
  }

  /** One write, inside the caller's transaction; true when it changed the table. */
  apply(write: InboxWrite): boolean {
    if (write.kind === "admit") {
      const { item } = write;
      return (
        this.sql(SQL.insert).run(
          item.id,
          item.key,
          write.envelopeJson ?? JSON.stringify(item.envelope),
          item.dedupeKey ?? null,
          item.state,
          item.admittedAt,
          item.updatedAt,
        ).changes > 0
      );
    }
    const outcome = write.outcome ? JSON.stringify(write.outcome) : null;
    return this.sql(SQL.end).run(write.state, write.at, outcome, write.id, write.state).changes > 0;
  }

  private sql(text: string): Database.Statement {
    let statement = this.statements.get(text);
    if (!statement) {
      statement = this.db.prepare(text);
      this.statements.set(text, statement);
    }
    return statement;
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
