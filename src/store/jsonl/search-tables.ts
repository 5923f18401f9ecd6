import { LRUCache } from "lru-cache";
import type { Session } from "../../model/session.js";
import { SqliteSearchIndex } from "../../search/sqlite/search-index.js";
import { Statements } from "../sql/sqlite-statements.js";
import { rewriteFile, scrubSearchTables } from "../sqlite/scrub.js";
import type { FileSystem } from "./durable-fs.js";
import { closeSearchDb, openSearchDb, type SearchDb } from "./search-db.js";

/** Sessions whose row this store knows as written (sid and mirrored fields), so a flush skips rewriting it. */
const KNOWN_SESSIONS = 10_000;

const SQL = {
  records: "SELECT sid, id, key, generation, state, agent, channel, size, mtime, stale FROM sessions",
  upsert: `INSERT INTO sessions (id, key, generation, state, agent, channel, size, mtime, stale)
    VALUES (@id, @key, @generation, @state, @agent, @channel, @size, @mtime, @stale)
    ON CONFLICT (id) DO UPDATE SET key = excluded.key, generation = excluded.generation, state = excluded.state,
      agent = excluded.agent, channel = excluded.channel, size = excluded.size, mtime = excluded.mtime
    RETURNING sid`,
  whole: "UPDATE sessions SET stale = 0 WHERE sid = ?",
  measured: "UPDATE sessions SET size = ?, mtime = ? WHERE id = ?",
  stale: "UPDATE sessions SET stale = 1 WHERE id = ?",
  sidOf: "SELECT sid FROM sessions WHERE id = ?",
  forget: "DELETE FROM sessions WHERE sid = ?",
  anyStale: "SELECT 1 FROM sessions WHERE stale = 1 LIMIT 1",
} as const;

/** A session's row in the index (search-db.ts says what `size`, `mtime` and `stale` mean). */
export interface SessionRecord {
  sid: number;
  id: string;
  key: string;
  generation: number;
  state: string;
  agent: string;
  channel: string;
  size: number;
  mtime: number | null;
  stale: number;
}

interface Opened {
  sidecar: SearchDb;
  sql: Statements;
  index: SqliteSearchIndex;
}

/**
 * The open sidecar index as its two writers (search-writes.ts, search-rebuild.ts) use it: the SQLite
 * store's search index on it, and its `sessions` table, which mirrors the store's sessions.
 */
export class SearchTables {
  private opened: Opened;
  /** Rows as last written: a flush rewrites a session's row only when what it mirrors changed. */
  private readonly rows = new LRUCache<string, SessionRecord>({ max: KNOWN_SESSIONS });
  private given = false;

  constructor(
    private readonly metaDir: string,
    private readonly fs: FileSystem,
  ) {
    this.opened = open(metaDir, fs);
  }

  /** Given up (close): nothing more is written or scheduled. */
  get closed(): boolean {
    return this.given;
  }

  get owner(): boolean {
    return this.opened.sidecar.owner;
  }

  get index(): SqliteSearchIndex {
    return this.opened.index;
  }

  /** Erasure: the vocabulary rebuilt, the FTS indexes merged and the file rewritten (sqlite/scrub.ts). */
  scrub(): number {
    const db = this.opened.sidecar.db;
    let words = 0;
    db.transaction(() => {
      words = scrubSearchTables(db);
    }).immediate();
    this.opened.index.forgetWords();
    rewriteFile(db);
    return words;
  }

  transaction(write: () => void): void {
    this.opened.sidecar.db.transaction(write).immediate();
  }

  /** After a write that rolled back: the words and rows remembered as written may not be there. */
  rolledBack(): void {
    this.index.forgetWords();
    this.rows.clear();
  }

  records(): Iterable<SessionRecord> {
    return this.opened.sql.get(SQL.records).iterate() as Iterable<SessionRecord>;
  }

  /** The session's row as this store last wrote it, if it still remembers. */
  known(id: string): SessionRecord | undefined {
    return this.rows.get(id);
  }

  upsert(session: Session, size: number, mtime: number | null, stale: number): number {
    const sid = this.opened.sql.get(SQL.upsert).pluck().get({
      id: session.id,
      key: session.key,
      generation: session.generation,
      state: session.state,
      agent: session.agent,
      channel: session.channel,
      size,
      mtime,
      stale,
    }) as number;
    const { id, key, generation, state, agent, channel } = session;
    this.rows.set(id, { sid, id, key, generation, state, agent, channel, size, mtime, stale });
    return sid;
  }

  /** Forgets the session's row and its messages (`sid` when the caller has it, else looked up). */
  forget(id: string, sid?: number): void {
    sid ??= this.opened.sql.get(SQL.sidOf).pluck().get(id) as number | undefined;
    this.rows.delete(id);
    if (sid === undefined) return;
    this.index.remove(sid);
    this.opened.sql.get(SQL.forget).run(sid);
  }

  markStale(id: string): void {
    this.opened.sql.get(SQL.stale).run(id);
  }

  markWhole(sid: number): void {
    this.opened.sql.get(SQL.whole).run(sid);
  }

  measured(id: string, size: number, mtimeMs: number): void {
    this.opened.sql.get(SQL.measured).run(size, mtimeMs, id);
  }

  anyStale(): boolean {
    return this.opened.sql.get(SQL.anyStale).get() !== undefined;
  }

  /** Gives up the file whatever state it is in and opens it again (replaced when damaged). */
  reopen(): void {
    try {
      closeSearchDb(this.opened.sidecar, false, this.fs);
    } catch {
      // Replaced below whatever state it is in.
    }
    this.opened = open(this.metaDir, this.fs);
    this.rows.clear();
  }

  /** `whole`: the file is made durable and vouched for by the close record (search-db.ts). */
  close(whole: boolean): void {
    this.given = true;
    closeSearchDb(this.opened.sidecar, whole, this.fs);
  }
}

export function mirrors(record: SessionRecord, session: Session): boolean {
  return (
    record.key === session.key &&
    record.generation === session.generation &&
    record.state === session.state &&
    record.agent === session.agent &&
    record.channel === session.channel
  );
}

function open(metaDir: string, fs: FileSystem): Opened {
  const sidecar = openSearchDb(metaDir, fs);
  const sql = new Statements(sidecar.db);
  return { sidecar, sql, index: new SqliteSearchIndex(sidecar.db, sql) };
}
