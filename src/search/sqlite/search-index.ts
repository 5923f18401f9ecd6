import type Database from "better-sqlite3";
import type { Entry } from "../../model/entry.js";
import { type EntryRow, entryFromRow } from "../../store/sql/rows.js";
import type { Statements } from "../../store/sql/sqlite-statements.js";
import type { SearchOptions } from "../budget.js";
import { CJK, indexedText } from "../indexed-text.js";
import type { NormalisedSearch, SearchResult } from "../query.js";
import { foldedWords } from "../rank.js";
import { searchSqlite } from "./search-run.js";

export { PREFIX_WORDS, SEARCH_WINDOW, SESSION_SCAN_ROWS } from "./search-run.js";

/**
 * How much text one step of the indexing takes in: what a fold or a flush adds to its transaction. A
 * longer message's words go into `search_terms` over several steps, and it goes into the FTS indexes
 * whole in the step that finishes them (a megabyte: ~20 ms).
 */
export const INDEX_SLICE_CHARS = 64 * 1024;
/** How long one step of the indexing (a fold's, a flush's) takes slices for, ms: a slice at least. */
export const INDEX_STEP_MS = 15;

const INDEX_SQL = {
  insertRow: "INSERT INTO search_rows (sid, seq, role, ts, body) VALUES (?, ?, ?, ?, ?)",
  indexWords:
    "INSERT INTO search_words (rowid, body) SELECT row, body FROM search_rows WHERE row > ? AND row <= ? ORDER BY row",
  // A part of the next row's text (from a character, 1-based, at most so many): never the whole of a long one.
  nextPart:
    "SELECT row, length(body) AS chars, substr(body, ?, ?) AS part FROM search_rows WHERE row > ? ORDER BY row LIMIT 1",
  gramsOf: "INSERT INTO search_grams (rowid, body) SELECT row, body FROM search_rows WHERE row = ?",
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
  indexedRowAt:
    "SELECT x.row AS row FROM search_sids x CROSS JOIN search_rows r ON r.row = x.row WHERE x.sid = ? AND r.seq = ?",
  deleteWordsOf: `INSERT INTO search_words (search_words, rowid, body) SELECT 'delete', row, body FROM search_rows WHERE row = ?`,
  deleteGramsOf: "DELETE FROM search_grams WHERE rowid = ?",
  deleteRowOf: "DELETE FROM search_rows WHERE row = ?",
  deleteSidOf: "DELETE FROM search_sids WHERE sid = ? AND row = ?",
  deletePendingAt: "DELETE FROM search_rows WHERE row > ? AND sid = ? AND seq = ?",
  indexedUpto: "SELECT indexed_upto FROM search_state WHERE one = 1",
  setIndexed: "UPDATE search_state SET indexed_upto = ? WHERE one = 1",
  backfillAfter: "SELECT backfill_after FROM search_state WHERE one = 1",
  setBackfill: "UPDATE search_state SET backfill_after = ? WHERE one = 1",
  nextSids: "SELECT sid FROM sessions WHERE sid > ? ORDER BY sid LIMIT ?",
  maxSid: "SELECT max(sid) FROM sessions",
  maxRow: "SELECT row FROM search_rows ORDER BY row DESC LIMIT 1",
} as const;

/** Words this process knows `search_terms` holds, so indexing skips their insert; forgotten past this many. */
const KNOWN_WORDS = 100_000;

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
  /** About how much text those rows hold (what this process appended; 0 once none is left). */
  private pendingText = 0;
  /**
   * The row whose words are being added to `search_terms` a slice at a time: how far (in characters, as
   * SQLite counts them), and whether its text had CJK so far.
   */
  private wordsAt: { row: number; at: number; cjk: boolean } | undefined;

  constructor(
    private readonly db: Database.Database,
    private readonly sql: Statements,
    /** A session's entries in seq order, for the background build of an upgraded database. */
    private readonly sessionRows: (sid: number) => EntryRow[] = () => [],
  ) {
    this.backfillAfter = this.readBackfillAfter();
    this.pendingRows = Math.max(0, (this.maxRow() ?? 0) - this.indexedUpto());
  }

  /** Rows not in the FTS indexes yet, as far as this process knows. */
  get pending(): number {
    return this.pendingRows;
  }

  /** About how many characters of text wait to be indexed (this process's appends since the last step). */
  get pendingChars(): number {
    return this.pendingText;
  }

  /** Whether the background build is under way, as the file says (its writer may be another thread). */
  get indexing(): boolean {
    return this.readBackfillAfter() !== undefined;
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

  /** Forgets some entries of a session, rewritten by an erasure (inside its transaction); `add` follows. */
  removeSeqs(sid: number, seqs: readonly number[]): void {
    const indexed = this.indexedUpto();
    for (const seq of seqs) {
      const rows = this.sql.get(INDEX_SQL.indexedRowAt).all(sid, seq) as Array<{ row: number }>;
      for (const { row } of rows) {
        this.sql.get(INDEX_SQL.deleteWordsOf).run(row);
        this.sql.get(INDEX_SQL.deleteGramsOf).run(row);
        this.sql.get(INDEX_SQL.deleteRowOf).run(row);
        this.sql.get(INDEX_SQL.deleteSidOf).run(sid, row);
      }
      this.sql.get(INDEX_SQL.deletePendingAt).run(indexed, sid, seq);
    }
    const last = this.maxRow() ?? 0;
    if (last < indexed) this.sql.get(INDEX_SQL.setIndexed).run(last);
  }

  /**
   * Takes rows above the FTS indexes' last into them, their words into `search_terms` first, at most
   * `maxChars` of text a call (a longer row's words over several calls): a step's work is bounded however
   * much was appended. The rows whose words are all in go into the FTS indexes in one statement (one new
   * FTS segment instead of one per commit). Inside a write transaction: every fold of the journal
   * (journal-fold.ts), which also runs once as many rows are pending as its threshold, and again while
   * rows are left. Returns whether rows are left.
   */
  indexPending(maxChars = Number.POSITIVE_INFINITY): boolean {
    const indexed = this.indexedUpto();
    const last = this.maxRow() ?? 0;
    let upto = indexed;
    let chars = 0;
    // A part of one row at a time (the statement is done before the next runs): the texts may be a
    // megabyte each, and only the part this step takes is read into this process.
    while (upto < last && chars < maxChars) {
      const progress = this.wordsAt;
      const at = progress?.at ?? 0;
      const take = Number.isFinite(maxChars) ? Math.ceil(maxChars - chars) : Number.MAX_SAFE_INTEGER;
      const next = this.sql.get(INDEX_SQL.nextPart).get(at + 1, take, upto) as
        | { row: number; chars: number; part: string }
        | undefined;
      if (!next) break;
      // The row in progress is gone (its session deleted, or rolled back): the next is read from its start.
      if (progress && progress.row !== next.row) {
        this.wordsAt = undefined;
        continue;
      }
      const whole = at + codePoints(next.part, next.part.length) >= next.chars;
      const cut = whole ? next.part.length : wordsEnd(next.part);
      const words = cut === next.part.length ? next.part : next.part.slice(0, cut);
      this.addWords(words);
      const cjk = (this.wordsAt?.cjk ?? false) || CJK.test(words);
      chars += Math.max(1, cut);
      if (!whole) {
        this.wordsAt = { row: next.row, at: at + codePoints(next.part, cut), cjk };
        break;
      }
      this.wordsAt = undefined;
      upto = next.row;
      // Only CJK queries read the trigram index, and a CJK term matches only text that has CJK.
      if (cjk) this.sql.get(INDEX_SQL.gramsOf).run(next.row);
    }
    if (upto > indexed) {
      this.sql.get(INDEX_SQL.indexWords).run(indexed, upto);
      this.sql.get(INDEX_SQL.indexSids).run(indexed, upto);
      this.sql.get(INDEX_SQL.setIndexed).run(upto);
    }
    this.pendingRows = Math.max(0, last - upto);
    this.pendingText = upto < last ? Math.max(0, this.pendingText - chars) : 0;
    return upto < last;
  }

  /** Slices of the rows not indexed yet for `INDEX_STEP_MS` (one at least); whether rows are left. */
  indexStep(): boolean {
    const until = performance.now() + INDEX_STEP_MS;
    let more: boolean;
    do more = this.indexPending(INDEX_SLICE_CHARS);
    while (more && performance.now() < until);
    return more;
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
            for (const row of this.sessionRows(sid)) this.addOne(sid, entryFromRow("", row));
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
    const after = this.readBackfillAfter();
    return { indexing: after !== undefined, doneSid: after ?? lastSid, lastSid };
  }

  /** Messages whose text matches, best first, within the search's time budget (search-run.ts). */
  search(q: NormalisedSearch, options?: SearchOptions): Promise<SearchResult> {
    return searchSqlite(
      {
        sql: this.sql,
        maxRow: () => this.maxRow(),
        indexedUpto: () => this.indexedUpto(),
        indexing: this.indexing,
      },
      q,
      options,
    );
  }

  /**
   * Forgets which words `search_terms` holds, and how far the row in progress got: after a rolled-back
   * write, some may not be there after all.
   */
  forgetWords(): void {
    this.knownWords.clear();
    this.wordsAt = undefined;
  }

  private readBackfillAfter(): number | undefined {
    return (this.sql.get(INDEX_SQL.backfillAfter).pluck().get() as number | null | undefined) ?? undefined;
  }

  private maxRow(): number | undefined {
    return this.sql.get(INDEX_SQL.maxRow).pluck().get() as number | undefined;
  }

  private indexedUpto(): number {
    return (this.sql.get(INDEX_SQL.indexedUpto).pluck().get() as number | undefined) ?? 0;
  }

  private addOne(sid: number, entry: Entry): void {
    const indexed = indexedText(entry);
    if (!indexed) return;
    this.sql.get(INDEX_SQL.insertRow).run(sid, entry.seq, indexed.role, entry.ts, indexed.text);
    this.pendingRows++;
    this.pendingText += indexed.text.length;
  }

  /** The words of a text into `search_terms` (what the last word typed is expanded to). */
  private addWords(text: string): void {
    for (const word of foldedWords(text)) {
      if (this.knownWords.has(word)) continue;
      if (this.knownWords.size >= KNOWN_WORDS) this.knownWords.clear();
      this.sql.get(INDEX_SQL.insertTerm).run(word);
      this.knownWords.add(word);
    }
  }
}

/**
 * Where the words of a part of a text end: after the last character that is not a letter, digit or mark
 * (so no word is cut), or at its end when it is one word.
 */
function wordsEnd(part: string): number {
  for (let i = part.length; i > 0; i--) {
    const code = part.charCodeAt(i - 1);
    // Never between the halves of a surrogate pair.
    if ((code < 0xd800 || code > 0xdbff) && !/[\p{L}\p{N}\p{M}]/u.test(part.charAt(i - 1))) return i;
  }
  return part.length;
}

/** How many characters, as SQLite counts them (code points), the first `units` UTF-16 units of `text` hold. */
function codePoints(text: string, units: number): number {
  let n = units;
  for (let i = 0; i < units; i++) {
    const code = text.charCodeAt(i);
    if (code >= 0xdc00 && code <= 0xdfff) n--;
  }
  return n;
}
