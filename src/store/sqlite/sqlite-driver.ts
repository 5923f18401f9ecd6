import type Database from "better-sqlite3";
import { builtModule } from "../../config/package-root.js";
import type { Entry } from "../../model/entry.js";
import type { Session } from "../../model/session.js";
import { type IndexProgress, SqliteSearchIndex } from "../../search/sqlite/search-index.js";
import type {
  DriverInbox,
  ForeignChanges,
  GroupOutcome,
  KeptContext,
  KeyHead,
  StoreDriver,
  WriteGroup,
} from "../driver.js";
import { freezeInPlace } from "../frozen.js";
import type { ErasedSender } from "../scrub.js";
import type { NormalisedQuery } from "../session-query.js";
import { listSessionsSql, scanSessionsSql } from "../sql/list-sql.js";
import { type EntryRow, entryFromRow, type SessionRow, sessionFromRow } from "../sql/rows.js";
import { Statements } from "../sql/sqlite-statements.js";
import type { EntryRange, SessionScan } from "../store.js";
import { DataVersion, ForeignCommits, WalCommits, WriterSignals } from "./data-version.js";
import { InboxTable } from "./inbox-table.js";
import type { ScrubCounts } from "./scrub.js";
import { SidCache } from "./sid-cache.js";
import { openDatabase, SQL } from "./sqlite-sql.js";
import { SqliteWriter } from "./sqlite-writer.js";
import { WriterClient } from "./writer-client.js";
import { receiveOutcome, type SqliteFileOptions, sendGroups, type WriterStats } from "./writer-protocol.js";

export interface SqliteDriverOptions extends SqliteFileOptions {
  /** Called when a checkpoint's fsync failed: the store stops. */
  onFailure: (error: unknown) => void;
  /**
   * Writes on a thread of their own (default, for a file, when the built writer program is there), or
   * on the calling thread. An in-memory database is always written on the calling thread.
   */
  writerThread?: boolean;
}

const NONE: ForeignChanges = { kind: "none" };
const ALL: ForeignChanges = { kind: "all" };

/** The writer thread's program, built beside this module (or in dist/ when this runs from its source). */
const WRITER_SCRIPT = builtModule(import.meta.url, "writer-thread");

/**
 * One SQLite file in WAL mode. Reads run on the calling thread's connection, straight from the file;
 * writes (sqlite-writer.ts) run on the store's writer thread with a connection of its own, one batch per
 * message, so the event loop never waits on a statement, an fsync or a checkpoint. An in-memory database
 * (or `writerThread: false`) is written on the calling thread instead, over the same connection.
 */
export class SqliteDriver implements StoreDriver {
  readonly backend = "sqlite";
  readonly rewritesEntries = true;
  readonly path: string;
  /** The readers' connection. */
  readonly db: Database.Database;
  /** The writer, when it runs on this thread. */
  readonly inlineWriter: SqliteWriter | undefined;
  readonly durableBarrier?: () => Promise<void>;

  /** Search reads; its writes are the writer's. */
  readonly searchIndex: SqliteSearchIndex;
  /** The inbox of admitted inputs, a table of this file committed with the groups (`WriteGroup.inbox`). */
  readonly inbox: DriverInbox;
  private readonly thread: WriterClient | undefined;
  private readonly sql: Statements;
  private readonly sids: SidCache;
  private readonly signals = new WriterSignals();
  /** Whether another process committed since the last look. */
  private readonly foreign: { changed(): boolean; close?(): void };
  private closed = false;

  constructor(options: SqliteDriverOptions) {
    this.path = options.path;
    this.db = openDatabase(options.path, options.durability, options);
    this.sql = new Statements(this.db);
    this.sids = new SidCache(this.sql);
    // The readers' connection commits nothing: the writer's setting, for whoever looks.
    if (this.db.pragma("journal_mode", { simple: true }) === "wal") this.db.pragma("synchronous = NORMAL");
    const threaded =
      options.path !== ":memory:" && options.writerThread !== false && WRITER_SCRIPT !== undefined;
    const writerOptions = {
      path: options.path,
      durability: options.durability,
      foldThreshold: options.foldThreshold,
      journalMinBatch: options.journalMinBatch,
      idleFoldMs: options.idleFoldMs,
      checkpointIntervalMs: options.checkpointIntervalMs,
    };
    if (threaded && WRITER_SCRIPT) {
      this.foreign = new ForeignCommits(new WalCommits(`${options.path}-shm`), this.signals);
      this.thread = new WriterClient(
        WRITER_SCRIPT,
        {
          ...writerOptions,
          busyTimeoutMs: options.busyTimeoutMs,
          pageCacheKb: options.pageCacheKb,
          signals: this.signals.buffer,
        },
        (error) => options.onFailure(error),
      );
      this.searchIndex = new SqliteSearchIndex(this.db, this.sql);
      const inbox = new InboxTable(this.db);
      const thread = this.thread;
      this.inbox = Object.assign(inbox, {
        prune: (before: number) => thread.request({ op: "prune", before }),
      });
    } else {
      // One connection: its `data_version` changes only with other processes' commits, and a commit that
      // sees one consumes it (the writer then says so, `takeForeign`).
      const dataVersion = new DataVersion(this.db);
      const signals = this.signals;
      this.foreign = { changed: () => dataVersion.changed() || signals.takeForeign() };
      const writer = new SqliteWriter(
        this.db,
        { ...writerOptions, signals, onFailure: options.onFailure },
        dataVersion,
      );
      this.inlineWriter = writer;
      this.searchIndex = writer.searchIndex;
      this.inbox = writer.inbox;
      if (writer.wal) this.durableBarrier = () => writer.durableBarrier();
    }
  }

  /** Whether writes run on the writer thread. */
  get threaded(): boolean {
    return this.thread !== undefined;
  }

  // ——— reads ———

  loadKey(key: string): KeyHead {
    const row = this.sql.get(SQL.current).get(key) as SessionRow | undefined;
    const lastGeneration = (this.sql.get(SQL.lastGeneration).get(key) as { g: number | null }).g ?? 0;
    if (!row) return { lastGeneration };
    this.sids.set(row.id, row.sid);
    return { current: sessionFromRow(row), lastGeneration };
  }
  generations(key: string): Session[] {
    return (this.sql.get(SQL.generations).all(key) as SessionRow[]).map((row) => this.fromRow(row));
  }

  sessionById(id: string): Session | undefined {
    const row = this.sql.get(SQL.byId).get(id) as SessionRow | undefined;
    return row && this.fromRow(row);
  }

  findIdempotent(session: Session, keys: readonly string[]): Map<string, Entry> {
    const found = new Map<string, Entry>();
    const sid = this.sidOf(session.id);
    if (sid === undefined) return found;
    for (const key of keys) {
      const row = this.sql.get(SQL.idempotent).get({ sid, key }) as EntryRow | undefined;
      if (row) found.set(key, entryFromRow(session.id, row));
    }
    return found;
  }

  readEntries(session: Session, range: EntryRange & { order: "asc" | "desc" }): Entry[] {
    const sid = this.sidOf(session.id);
    if (sid === undefined) return [];
    const rows = this.sql.get(range.order === "desc" ? SQL.rangeDesc : SQL.rangeAsc).all({
      sid,
      after: range.afterSeq ?? 0,
      before: range.beforeSeq ?? Number.MAX_SAFE_INTEGER,
      limit: range.limit ?? -1,
    }) as EntryRow[];
    return rows.map((e) => entryFromRow(session.id, e));
  }

  loadKept(session: Session): KeptContext {
    const sid = this.sidOf(session.id);
    if (sid === undefined) return { entries: [] };
    const rows = this.sql.get(SQL.kept).all({ sid, from: session.contextFromSeq }) as EntryRow[];
    // Parsed for this call and held by nothing else: frozen where they are, the core's cache keeps them
    // instead of copying each one.
    const entries = rows.map((e) => freezeInPlace(entryFromRow(session.id, e)));
    const kept: KeptContext = { entries, frozen: true };
    if (session.lastCompactionSeq !== undefined) {
      const row = this.sql.get(SQL.entryAt).get({ sid, seq: session.lastCompactionSeq }) as
        | EntryRow
        | undefined;
      const entry = row && entryFromRow(session.id, row);
      if (entry?.type === "compaction") kept.summary = freezeInPlace(entry);
    }
    return kept;
  }

  forksOf(sessionIds: readonly string[]): Session[] {
    return (this.sql.get(SQL.forksOf).all(JSON.stringify(sessionIds)) as SessionRow[]).map((row) =>
      this.fromRow(row),
    );
  }

  list(query: NormalisedQuery): Session[] {
    const { sql, params } = listSessionsSql(query);
    return (this.sql.get(sql).all(params) as SessionRow[]).map(sessionFromRow);
  }

  scan(scan: SessionScan & { limit: number }): Session[] {
    const { sql, params } = scanSessionsSql(scan);
    return (this.sql.get(sql).all(params) as SessionRow[]).map(sessionFromRow);
  }

  foreignChanges(): ForeignChanges {
    if (!this.foreign.changed()) return NONE;
    this.sids.clear();
    return ALL;
  }

  // ——— writes ———

  commit(groups: readonly WriteGroup[], durable: boolean): GroupOutcome[] | Promise<GroupOutcome[]> {
    for (const group of groups)
      for (const change of group.changes)
        if (change.kind === "deleteSession") this.sids.delete(change.session.id);
    if (!this.thread) return this.writer().commit(groups, durable);
    return this.thread
      .request({ op: "commit", groups: sendGroups(groups), durable })
      .then((outcomes) => outcomes.map(receiveOutcome));
  }

  /** The inline fsync of a small durable batch (the calling thread's writer only). */
  syncNow(): void {
    this.inlineWriter?.syncNow();
  }

  sync(): Promise<void> {
    return this.thread ? this.thread.request({ op: "sync" }) : this.writer().sync();
  }

  /** One step of the background build of an upgraded database's search index. */
  backfillStep(sessions: number): IndexProgress | Promise<IndexProgress> {
    return this.thread
      ? this.thread.request({ op: "backfill", sessions })
      : this.writer().backfillStep(sessions);
  }

  /** Takes every search row not indexed yet into the index. */
  async indexAll(): Promise<void> {
    if (this.thread) await this.thread.request({ op: "indexAll" });
    else this.writer().indexAll();
  }

  /** Erasure: the keys' inbox rows go and the file is rewritten without freed bytes (scrub.ts). */
  scrub(keys: readonly string[], senders: readonly ErasedSender[] = []): ScrubCounts | Promise<ScrubCounts> {
    return this.thread
      ? this.thread.request({ op: "scrub", keys: [...keys], senders: [...senders] })
      : this.writer().scrub(keys, senders);
  }

  /** The writer's fsyncs and checkpoints so far, for tests and metrics. */
  async writerStats(): Promise<WriterStats> {
    if (this.thread) return this.thread.request({ op: "stats" });
    const writer = this.writer();
    return { fsyncs: writer.wal?.fsyncs ?? 0, checkpoints: writer.wal?.checkpoints ?? 0 };
  }

  async close(failed: boolean): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.thread) await this.thread.close(failed);
    else await this.writer().close(failed);
    this.foreign.close?.();
    this.db.close();
  }

  private writer(): SqliteWriter {
    if (!this.inlineWriter) throw new Error("the store writes on its writer thread");
    return this.inlineWriter;
  }

  private fromRow(row: SessionRow): Session {
    this.sids.set(row.id, row.sid);
    return sessionFromRow(row);
  }

  private sidOf(id: string): number | undefined {
    return this.sids.get(id);
  }
}
