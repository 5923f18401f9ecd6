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
import { InboxTable } from "./inbox-table.js";

export interface SqliteInboxOptions {
  /** The database file: the inbox is its own table there, written through its own connection. */
  path: string;
  /** How long a write waits for the store's writer to let go of the file; default 5 s. */
  busyTimeoutMs?: number;
}

/**
 * The inbox as a table of a SQLite file on a connection of its own (`synchronous = FULL`), for an engine
 * whose store is not this file's `SqliteStore` (tools, tests). Beside a `SqliteStore`, `store.inbox()`
 * writes the same table through the store's own writer instead. The writes of one turn of the event loop
 * commit as one transaction, and an admission resolves once its transaction is on disk.
 */
export class SqliteInbox implements Inbox {
  readonly backend = "sqlite";
  private readonly db: Database.Database;
  private readonly table: InboxTable;
  private readonly writer: GroupCommit<() => unknown>;
  private closed = false;

  constructor(options: SqliteInboxOptions) {
    this.db = new (sqliteDatabase())(options.path);
    this.db.pragma("journal_mode = WAL");
    this.db.pragma("synchronous = FULL");
    this.db.pragma(`busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs ?? 5000))}`);
    this.table = new InboxTable(this.db);
    const transact = this.db.transaction((ops: ReadonlyArray<() => unknown>) => runAll(ops));
    this.writer = new GroupCommit<() => unknown>((ops) => transact.immediate(ops), {
      intervalMs: 0,
      maxBatch: 2000,
    });
  }

  admit(input: AdmitInput): Promise<AdmitResult> {
    let item: InboxItem;
    let envelopeJson: string;
    try {
      envelopeJson = jsonText(input.envelope);
      item = pendingItem(input, JSON.parse(envelopeJson) as InboxItem["envelope"]);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.write((): AdmitResult => {
      const existing = item.dedupeKey === undefined ? undefined : this.table.byDedupeKey(item.dedupeKey);
      if (existing) return { item: existing, admitted: false };
      this.table.apply({ kind: "admit", item, envelopeJson });
      return { item, admitted: true };
    }, true);
  }

  transition(id: string, state: InboxState, at: number, outcome?: InboxOutcome): Promise<boolean> {
    return this.write((): boolean => {
      const item = this.table.get(id);
      if (!item || !canTransition(item.state, state)) return false;
      return this.table.apply({ kind: "end", id, state, at, ...(outcome ? { outcome } : {}) });
    }, false);
  }

  async get(id: string): Promise<InboxItem | undefined> {
    await this.settled();
    return this.table.get(id);
  }

  async unfinished(): Promise<InboxItem[]> {
    await this.settled();
    return this.table.unfinished();
  }

  prune(before: number): Promise<number> {
    return this.write(() => this.table.prune(before), false);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.writer.close();
    this.db.close();
  }

  private write<T>(run: () => T, durable: boolean): Promise<T> {
    if (this.closed) return Promise.reject(closedError());
    return this.writer.submit<T>(run, durable);
  }

  private async settled(): Promise<void> {
    if (this.closed) throw closedError();
    await this.writer.flush();
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
