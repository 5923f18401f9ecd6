import type Database from "better-sqlite3";
import type { Entry } from "../../model/entry.js";
import { CJK, indexedText } from "../../search/indexed-text.js";
import {
  encodeSearchCursor,
  type NormalisedSearch,
  RECENCY_HALF_LIFE_MS,
  type SearchHit,
  type SearchResult,
  type SearchRole,
  type SearchTerm,
} from "../../search/query.js";
import { makeSnippet } from "../../search/snippet.js";
import { type EntryRow, entryFromRow } from "./rows.js";
import { SQL, type Statements } from "./sqlite-sql.js";

const INDEX_SQL = {
  insertRow: "INSERT INTO search_rows (sid, seq, role, ts) VALUES (?, ?, ?, ?)",
  insertWords: "INSERT INTO search_words (rowid, body) VALUES (?, ?)",
  insertGrams: "INSERT INTO search_grams (rowid, body) VALUES (?, ?)",
  deleteWords: "DELETE FROM search_words WHERE rowid IN (SELECT row FROM search_rows WHERE sid = ?)",
  deleteGrams: "DELETE FROM search_grams WHERE rowid IN (SELECT row FROM search_rows WHERE sid = ?)",
  deleteRows: "DELETE FROM search_rows WHERE sid = ?",
  backfillAfter: "SELECT backfill_after FROM search_state WHERE one = 1",
  setBackfill: "UPDATE search_state SET backfill_after = ? WHERE one = 1",
  nextSids: "SELECT sid FROM sessions WHERE sid > ? ORDER BY sid LIMIT ?",
  maxSid: "SELECT max(sid) FROM sessions",
} as const;

/** Where the background build of an upgraded database's index stands. */
export interface IndexProgress {
  indexing: boolean;
  /** Sessions indexed so far by the build, and how many there are to index (sid order). */
  doneSid: number;
  lastSid: number;
}

interface HitRow {
  row: number;
  seq: number;
  role: SearchRole;
  ts: number;
  key: string;
  id: string;
  generation: number;
  state: "active" | "archived";
  agent: string;
  channel: string;
  body: string;
  score: number;
}

/** An FTS5 string: double quotes doubled. */
const quoted = (text: string): string => `"${text.replaceAll('"', '""')}"`;

/**
 * The search index of a SQLite store, written by the driver inside the transaction that appends or deletes
 * (so an acknowledged message is always found, a deleted session never again). Rows point at sessions by
 * sid, so resets (the state) and rekeys (the key) need no index change. Ranking: BM25 of the matched
 * index, weighted by recency (`RECENCY_HALF_LIFE_MS`); keyset pages on (score, row).
 */
export class SqliteSearchIndex {
  /** The sid the background build has indexed up to; undefined when every session is indexed. */
  private backfillAfter: number | undefined;

  constructor(
    private readonly db: Database.Database,
    private readonly sql: Statements,
  ) {
    const after = this.sql.get(INDEX_SQL.backfillAfter).pluck().get() as number | null | undefined;
    this.backfillAfter = after ?? undefined;
  }

  get indexing(): boolean {
    return this.backfillAfter !== undefined;
  }

  /** Indexes appended entries (inside the append's transaction). */
  add(sid: number, entries: readonly Entry[]): void {
    // A session the background build has not reached yet is indexed by it, whole.
    if (this.backfillAfter !== undefined && sid > this.backfillAfter) return;
    for (const entry of entries) this.addOne(sid, entry);
  }

  /** Forgets a deleted session (inside the delete's transaction). */
  remove(sid: number): void {
    this.sql.get(INDEX_SQL.deleteWords).run(sid);
    this.sql.get(INDEX_SQL.deleteGrams).run(sid);
    this.sql.get(INDEX_SQL.deleteRows).run(sid);
  }

  /**
   * One step of the background build: indexes the next `sessions` sessions (sid order) in one transaction
   * that also records how far it got, so a restart resumes there. Call between commits.
   */
  backfillStep(sessions: number): IndexProgress {
    if (this.backfillAfter !== undefined) {
      this.db
        .transaction(() => {
          const after = this.backfillAfter ?? 0;
          const sids = this.sql.get(INDEX_SQL.nextSids).pluck().all(after, sessions) as number[];
          for (const sid of sids) {
            const rows = this.sql.get(SQL.rangeAsc).all({
              sid,
              after: 0,
              before: Number.MAX_SAFE_INTEGER,
              limit: -1,
            }) as EntryRow[];
            for (const row of rows) this.addOne(sid, entryFromRow("", row));
          }
          const done = sids.length < sessions ? null : (sids.at(-1) ?? null);
          this.sql.get(INDEX_SQL.setBackfill).run(done);
          this.backfillAfter = done ?? undefined;
        })
        .immediate();
    }
    return this.progress();
  }

  progress(): IndexProgress {
    const lastSid = (this.sql.get(INDEX_SQL.maxSid).pluck().get() as number | null) ?? 0;
    return { indexing: this.indexing, doneSid: this.backfillAfter ?? lastSid, lastSid };
  }

  search(q: NormalisedSearch): SearchResult {
    const { sql, params } = searchSql(q);
    const rows = this.sql.get(sql).all(params) as HitRow[];
    const more = rows.length > q.limit;
    const page = more ? rows.slice(0, q.limit) : rows;
    const hits = page.map(
      (r): SearchHit => ({
        key: r.key,
        sessionId: r.id,
        generation: r.generation,
        archived: r.state === "archived",
        seq: r.seq,
        role: r.role,
        ts: r.ts,
        agent: r.agent,
        channel: r.channel,
        snippet: makeSnippet(r.body, q.terms),
      }),
    );
    const last = page.at(-1);
    const result: SearchResult = { hits, indexing: this.indexing };
    if (more && last)
      result.nextCursor = encodeSearchCursor({ now: q.now, score: last.score, row: last.row });
    return result;
  }

  private addOne(sid: number, entry: Entry): void {
    const indexed = indexedText(entry);
    if (!indexed) return;
    const row = Number(
      this.sql.get(INDEX_SQL.insertRow).run(sid, entry.seq, indexed.role, entry.ts).lastInsertRowid,
    );
    this.sql.get(INDEX_SQL.insertWords).run(row, indexed.text);
    // Only CJK queries read the trigram index, and a CJK term matches only text that has CJK.
    if (CJK.test(indexed.text)) this.sql.get(INDEX_SQL.insertGrams).run(row, indexed.text);
  }
}

/**
 * The query. Words go to the word index (the last one as a prefix, for results as you type), unless the
 * text has CJK (written without spaces) or a term is a phrase of CJK: then terms of 3+ characters go to
 * the trigram index, and shorter CJK terms are matched with LIKE on the rows the rest found.
 */
export function searchSql(q: NormalisedSearch): { sql: string; params: Record<string, unknown> } {
  const params: Record<string, unknown> = { now: q.now, h: RECENCY_HALF_LIFE_MS, limit: q.limit + 1 };
  const cjk = q.terms.some((t) => CJK.test(t.text));
  const where: string[] = [];
  let source: string;
  if (!cjk) {
    params.match = wordsMatch(q.terms);
    source =
      "SELECT rowid AS row, bm25(search_words) AS rank FROM search_words WHERE search_words MATCH @match";
  } else {
    const long = q.terms.filter((t) => [...t.text].length >= 3);
    const short = q.terms.filter((t) => [...t.text].length < 3);
    short.forEach((t, i) => {
      params[`like${i}`] = `%${t.text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      where.push(`w.body LIKE @like${i} ESCAPE '\\'`);
    });
    if (long.length > 0) {
      params.match = long.map((t) => quoted(t.text)).join(" ");
      source =
        "SELECT rowid AS row, bm25(search_grams) AS rank FROM search_grams WHERE search_grams MATCH @match";
    } else source = "SELECT rowid AS row, -1.0 AS rank FROM search_words";
  }
  if (q.role) {
    params.role = q.role;
    where.push("r.role = @role");
  }
  if (q.since !== undefined) {
    params.since = q.since;
    where.push("r.ts >= @since");
  }
  if (q.until !== undefined) {
    params.until = q.until;
    where.push("r.ts < @until");
  }
  if (q.agent) {
    params.agent = q.agent;
    where.push("s.agent = @agent");
  }
  if (q.channel) {
    params.channel = q.channel;
    where.push("s.channel = @channel");
  }
  if (q.keyPrefix) {
    params.prefix = q.keyPrefix;
    where.push("substr(s.key, 1, length(@prefix)) = @prefix");
  }
  if (q.archived !== "include")
    where.push(q.archived === "only" ? "s.state = 'archived'" : "s.state = 'active'");
  const score = "m.rank * @h / (@h + max(0, @now - r.ts))";
  if (q.after) {
    params.afterScore = q.after.score;
    params.afterRow = q.after.row;
    where.push(`(${score} > @afterScore OR (${score} = @afterScore AND r.row > @afterRow))`);
  }
  // Ranked on the index rows alone (sessions joined only when a filter needs them); the text and the
  // session of the page's hits only are read after the cut.
  const bySession = where.some((w) => w.includes("s.")) || where.some((w) => w.includes("w."));
  const sql = `WITH m AS (${source}),
page AS (SELECT r.row, r.sid, r.seq, r.role, r.ts, ${score} AS score FROM m JOIN search_rows r ON r.row = m.row
${bySession ? "JOIN sessions s ON s.sid = r.sid JOIN search_words w ON w.rowid = r.row" : ""}
${where.length > 0 ? `WHERE ${where.join(" AND ")}` : ""}
ORDER BY score, r.row LIMIT @limit)
SELECT p.row, p.seq, p.role, p.ts, s.key, s.id, s.generation, s.state, s.agent, s.channel, w.body, p.score
FROM page p JOIN sessions s ON s.sid = p.sid JOIN search_words w ON w.rowid = p.row ORDER BY p.score, p.row`;
  return { sql, params };
}

/** Every term must occur; the last word typed matches as a prefix. */
function wordsMatch(terms: readonly SearchTerm[]): string {
  return terms
    .map((t, i) => (t.phrase || i < terms.length - 1 ? quoted(t.text) : `${quoted(t.text)}*`))
    .join(" ");
}
