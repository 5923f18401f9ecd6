import type Database from "better-sqlite3";
import type { Entry } from "../../model/entry.js";
import { CJK, indexedText } from "../../search/indexed-text.js";
import {
  encodeSearchCursor,
  type NormalisedSearch,
  ranksAfter,
  type SearchHit,
  type SearchPosition,
  type SearchResult,
} from "../../search/query.js";
import {
  bm25Part,
  FoldedText,
  fold,
  foldedWords,
  idf,
  occurrences,
  recencyScore,
  type TermMatcher,
  termMatcher,
} from "../../search/rank.js";
import { makeSnippet } from "../../search/snippet.js";
import { type EntryRow, entryFromRow } from "../sql/rows.js";
import {
  type CandidateRow,
  indexDrivenSql,
  isCjkQuery,
  narrowsSessions,
  pendingRowsSql,
  quoted,
  sessionDrivenSql,
  sessionRowsSql,
  wordsMatch,
} from "./search-sql.js";
import { SQL, type Statements } from "./sqlite-sql.js";

const INDEX_SQL = {
  insertRow: "INSERT INTO search_rows (sid, seq, role, ts, body) VALUES (?, ?, ?, ?, ?)",
  indexWords:
    "INSERT INTO search_words (rowid, body) SELECT row, body FROM search_rows WHERE row > ? AND row <= ? ORDER BY row",
  rowsAbove: "SELECT row, body FROM search_rows WHERE row > ? AND row <= ? ORDER BY row",
  insertGrams: "INSERT INTO search_grams (rowid, body) VALUES (?, ?)",
  insertTerm: "INSERT OR IGNORE INTO search_terms (term) VALUES (?)",
  indexSids:
    "INSERT INTO search_sids (sid, row) SELECT sid, row FROM search_rows WHERE row > ? AND row <= ? ORDER BY sid, row",
  // An external-content index forgets a row when told its text; `search_sids` holds the indexed rows.
  deleteWords: `INSERT INTO search_words (search_words, rowid, body)
    SELECT 'delete', r.row, r.body FROM search_sids x CROSS JOIN search_rows r ON r.row = x.row WHERE x.sid = ?`,
  deleteGrams: "DELETE FROM search_grams WHERE rowid IN (SELECT row FROM search_sids WHERE sid = ?)",
  deleteRows: "DELETE FROM search_rows WHERE row IN (SELECT row FROM search_sids WHERE sid = ?)",
  deletePending: "DELETE FROM search_rows WHERE row > ? AND sid = ?",
  deleteSids: "DELETE FROM search_sids WHERE sid = ?",
  indexedUpto: "SELECT indexed_upto FROM search_state WHERE one = 1",
  setIndexed: "UPDATE search_state SET indexed_upto = ? WHERE one = 1",
  backfillAfter: "SELECT backfill_after FROM search_state WHERE one = 1",
  setBackfill: "UPDATE search_state SET backfill_after = ? WHERE one = 1",
  nextSids: "SELECT sid FROM sessions WHERE sid > ? ORDER BY sid LIMIT ?",
  maxSid: "SELECT max(sid) FROM sessions",
  maxRow: "SELECT row FROM search_rows ORDER BY row DESC LIMIT 1",
  prefixTerms: "SELECT term FROM search_terms WHERE term >= ? AND term < ? LIMIT 1000",
  termSpread:
    "SELECT count(*) AS n, min(rowid) AS low FROM (SELECT rowid FROM search_words WHERE search_words MATCH ? AND rowid < ? ORDER BY rowid DESC LIMIT ?)",
} as const;

/**
 * How many matches one window ranks: the newest WINDOW matches (after the filters) below the window's top
 * row are ranked against each other by BM25 and recency; the next window starts below the oldest of them.
 */
export const SEARCH_WINDOW = 200;
/** Filters that select sessions holding at most this many indexed messages read those instead of the index. */
export const SESSION_SCAN_ROWS = 5_000;
/** The last word typed matches as a prefix of at most this many indexed words (the shortest). */
export const PREFIX_WORDS = 50;
/** Words this process knows `search_terms` holds, so appends skip their insert; forgotten past this many. */
const KNOWN_WORDS = 100_000;

/** A match of a window, scored. */
interface Scored {
  candidate: CandidateRow;
  score: number;
  top: number;
}

/** Where the background build of an upgraded database's index stands. */
export interface IndexProgress {
  indexing: boolean;
  /** Sessions indexed so far by the build, and how many there are to index (sid order). */
  doneSid: number;
  lastSid: number;
}

/**
 * The search index of a SQLite store, written by the driver inside the transaction that appends or deletes
 * (so an acknowledged message is always found, a deleted session never again). Rows point at sessions by
 * sid, so resets (the state) and rekeys (the key) need no index change. Ranking: BM25 of the matched
 * index, weighted by recency (`RECENCY_HALF_LIFE_MS`); keyset pages on (score, row).
 */
export class SqliteSearchIndex {
  /** The sid the background build has indexed up to; undefined when every session is indexed. */
  private backfillAfter: number | undefined;
  private readonly knownWords = new Set<string>();
  /** Rows this process appended since it last took rows into the FTS indexes (others may add more). */
  private pendingRows: number;

  constructor(
    private readonly db: Database.Database,
    private readonly sql: Statements,
  ) {
    const after = this.sql.get(INDEX_SQL.backfillAfter).pluck().get() as number | null | undefined;
    this.backfillAfter = after ?? undefined;
    this.pendingRows = Math.max(0, (this.maxRow() ?? 0) - this.indexedUpto());
  }

  /** Rows not in the FTS indexes yet, as far as this process knows. */
  get pending(): number {
    return this.pendingRows;
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
    const indexed = this.indexedUpto();
    this.sql.get(INDEX_SQL.deleteWords).run(sid);
    this.sql.get(INDEX_SQL.deleteGrams).run(sid);
    this.sql.get(INDEX_SQL.deleteRows).run(sid);
    this.sql.get(INDEX_SQL.deletePending).run(indexed, sid);
    this.sql.get(INDEX_SQL.deleteSids).run(sid);
    // Row numbers of deleted rows at the top are used again: those rows must count as not indexed yet.
    const last = this.maxRow() ?? 0;
    if (last < indexed) this.sql.get(INDEX_SQL.setIndexed).run(last);
  }

  /**
   * Takes the rows above the FTS indexes' last into them, in one statement (one new FTS segment instead of
   * one per commit). Inside a write transaction: every fold of the journal (journal-fold.ts), which also
   * runs once as many rows are pending as its threshold.
   */
  indexPending(): void {
    const indexed = this.indexedUpto();
    const last = this.maxRow() ?? 0;
    if (last > indexed) {
      this.sql.get(INDEX_SQL.indexWords).run(indexed, last);
      this.sql.get(INDEX_SQL.indexSids).run(indexed, last);
      // Only CJK queries read the trigram index, and a CJK term matches only text that has CJK.
      const rows = this.sql.get(INDEX_SQL.rowsAbove).all(indexed, last) as { row: number; body: string }[];
      for (const { row, body } of rows)
        if (CJK.test(body)) this.sql.get(INDEX_SQL.insertGrams).run(row, body);
      this.sql.get(INDEX_SQL.setIndexed).run(last);
    }
    this.pendingRows = 0;
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
          this.indexPending();
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

  /**
   * Ranks window after window of matches (see SEARCH_WINDOW) until the page is full: the newest window
   * first, its matches by score (BM25 times recency; lower is better) and row. A cursor holds the window's
   * top, so the next page ranks the same window again and goes on after the last hit, whatever was appended
   * since; a deleted session's hits are simply gone.
   */
  search(q: NormalisedSearch): SearchResult {
    const matchers = this.matchers(q);
    const match = isCjkQuery(q) ? "" : wordsMatch(q.terms, [...(matchers.at(-1)?.expansion ?? [])]);
    const found: Scored[] = [];
    let after: SearchPosition | undefined = q.after;
    let top = q.after?.top ?? (this.maxRow() ?? 0) + 1;
    for (;;) {
      const candidates = this.candidates(q, matchers, match, top);
      const window = candidates.slice(0, SEARCH_WINDOW);
      const ranked = this.rank(q, matchers, match, window, top);
      for (const scored of ranked)
        if (ranksAfter(scored.score, scored.candidate.row, after)) found.push(scored);
      const oldest = window.at(-1);
      if (found.length > q.limit || candidates.length <= SEARCH_WINDOW || !oldest) break;
      top = oldest.row;
      after = undefined;
    }
    const page = found.slice(0, q.limit);
    const sids = JSON.stringify([...new Set(page.map((s) => s.candidate.sid))]);
    const sessions = new Map(
      (this.sql.get(SESSIONS_OF).all(sids) as SessionOfRow[]).map((s) => [s.sid, s] as const),
    );
    const hits = page.flatMap(({ candidate: c }): SearchHit[] => {
      // A deleted session's rows go in the delete's transaction: every row has its session.
      const session = sessions.get(c.sid);
      if (!session) return [];
      return [
        {
          key: session.key,
          sessionId: session.id,
          generation: session.generation,
          archived: session.state === "archived",
          seq: c.seq,
          role: c.role,
          ts: c.ts,
          agent: session.agent,
          channel: session.channel,
          snippet: makeSnippet(c.body, q.terms),
        },
      ];
    });
    const last = page.at(-1);
    const result: SearchResult = { hits, indexing: this.indexing };
    if (found.length > q.limit && last)
      result.nextCursor = encodeSearchCursor({
        now: q.now,
        score: last.score,
        row: last.candidate.row,
        top: last.top,
      });
    return result;
  }

  /** Forgets which words `search_terms` holds: after a rolled-back write, some may not be there after all. */
  forgetWords(): void {
    this.knownWords.clear();
  }

  private maxRow(): number | undefined {
    return this.sql.get(INDEX_SQL.maxRow).pluck().get() as number | undefined;
  }

  private indexedUpto(): number {
    return (this.sql.get(INDEX_SQL.indexedUpto).pluck().get() as number | undefined) ?? 0;
  }

  /** Each term's matcher; the last word typed gets the indexed words it begins. */
  private matchers(q: NormalisedSearch): TermMatcher[] {
    return q.terms.map((term, i): TermMatcher => {
      if (term.phrase || i < q.terms.length - 1 || CJK.test(term.text)) return termMatcher(term);
      const prefix = fold(term.text);
      const words = this.sql
        .get(INDEX_SQL.prefixTerms)
        .pluck()
        .all(prefix, prefix + MAX_CHAR) as string[];
      words.sort((a, b) => a.length - b.length || (a < b ? -1 : 1));
      return termMatcher(term, new Set([prefix, ...words.slice(0, PREFIX_WORDS)]));
    });
  }

  /**
   * The newest SEARCH_WINDOW + 1 matches below `top`: the rows not in the FTS indexes yet (all newer than
   * those in them), then the filtered sessions' indexed rows when they hold few, else the index's matches
   * with the filters joined; rows read here (not through FTS) are matched in this process.
   */
  private candidates(
    q: NormalisedSearch,
    matchers: readonly TermMatcher[],
    match: string,
    top: number,
  ): CandidateRow[] {
    const want = SEARCH_WINDOW + 1;
    const indexed = this.indexedUpto();
    const out: CandidateRow[] = [];
    if (top > indexed + 1) {
      const pending = pendingRowsSql(q, indexed, top);
      out.push(...matching(this.sql.get(pending.sql).iterate(pending.params), matchers, want));
    }
    if (out.length === want) return out;
    const below = Math.min(top, indexed + 1);
    if (narrowsSessions(q)) {
      const count = sessionRowsSql(q, SESSION_SCAN_ROWS + 1);
      if ((this.sql.get(count.sql).pluck().get(count.params) as number) <= SESSION_SCAN_ROWS) {
        const rows = sessionDrivenSql(q, below, SESSION_SCAN_ROWS);
        out.push(...matching(this.sql.get(rows.sql).iterate(rows.params), matchers, want - out.length));
        return out;
      }
    }
    const walk = indexDrivenSql(q, match, below, want - out.length);
    out.push(...(this.sql.get(walk.sql).all(walk.params) as CandidateRow[]));
    return out;
  }

  /**
   * Scores a window: BM25 over its messages (lengths in characters, the window's mean as the average), each term's
   * document frequency estimated below `top` from how densely its newest matches lie; CJK terms count 1
   * per matching message. Everything depends only on rows below `top`, so a page's scores are the same
   * when its cursor is followed later.
   */
  private rank(
    q: NormalisedSearch,
    matchers: readonly TermMatcher[],
    match: string,
    window: readonly CandidateRow[],
    top: number,
  ): Scored[] {
    const docs = window.map((c) => ({ c, text: new FoldedText(c.body) }));
    const avg = Math.max(1, docs.reduce((n, d) => n + d.text.folded.length, 0) / Math.max(1, docs.length));
    const rows = Math.max(1, top - 1);
    const idfs = matchers.map((m, i) => {
      if (CJK.test(m.term.text) || matchers.length === 1 || match === "") return 1;
      const termMatch =
        i === matchers.length - 1 ? wordsMatch([m.term], [...(m.expansion ?? [])]) : quoted(m.term.text);
      const spread = this.sql.get(INDEX_SQL.termSpread).get(termMatch, top, SEARCH_WINDOW) as {
        n: number;
        low: number | null;
      };
      const df =
        spread.n < SEARCH_WINDOW || spread.low === null
          ? spread.n
          : (spread.n * rows) / Math.max(1, top - spread.low);
      return idf(rows, df);
    });
    const scored = docs.map(({ c, text }): Scored => {
      let rank = 0;
      matchers.forEach((m, i) => {
        const tf = occurrences(m, text);
        rank -= CJK.test(m.term.text) ? 1 : bm25Part(idfs[i] ?? 1, Math.max(1, tf), text.folded.length, avg);
      });
      return { candidate: c, score: recencyScore(rank, c.ts, q.now), top };
    });
    return scored.sort((a, b) => a.score - b.score || a.candidate.row - b.candidate.row);
  }

  private addOne(sid: number, entry: Entry): void {
    const indexed = indexedText(entry);
    if (!indexed) return;
    this.sql.get(INDEX_SQL.insertRow).run(sid, entry.seq, indexed.role, entry.ts, indexed.text);
    this.pendingRows++;
    for (const word of foldedWords(indexed.text)) {
      if (this.knownWords.has(word)) continue;
      if (this.knownWords.size >= KNOWN_WORDS) this.knownWords.clear();
      this.sql.get(INDEX_SQL.insertTerm).run(word);
      this.knownWords.add(word);
    }
  }
}

/** The highest code point: `prefix || MAX_CHAR` bounds the words that begin with `prefix` from above. */
const MAX_CHAR = String.fromCodePoint(0x10ffff);

/** The first `want` rows whose text every matcher matches. */
function matching(rows: Iterable<unknown>, matchers: readonly TermMatcher[], want: number): CandidateRow[] {
  const out: CandidateRow[] = [];
  if (want <= 0) return out;
  for (const row of rows as Iterable<CandidateRow>) {
    const text = new FoldedText(row.body);
    if (matchers.every((m) => occurrences(m, text) > 0)) out.push(row);
    if (out.length === want) break;
  }
  return out;
}

/** The sessions of a page's hits, in one statement (`?` a JSON array of sids). */
const SESSIONS_OF =
  "SELECT sid, key, id, generation, state, agent, channel FROM sessions WHERE sid IN (SELECT value FROM json_each(?))";

interface SessionOfRow {
  sid: number;
  key: string;
  id: string;
  generation: number;
  state: "active" | "archived";
  agent: string;
  channel: string;
}
