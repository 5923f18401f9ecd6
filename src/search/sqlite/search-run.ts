import type { Statements } from "../../store/sql/sqlite-statements.js";
import { SearchBudget, type SearchOptions } from "../budget.js";
import { CJK } from "../indexed-text.js";
import {
  encodeSearchCursor,
  type NormalisedSearch,
  ranksAfter,
  type SearchHit,
  type SearchPosition,
  type SearchResult,
} from "../query.js";
import {
  bm25Part,
  FoldedText,
  fold,
  idf,
  occurrences,
  recencyScore,
  type TermMatcher,
  termMatcher,
} from "../rank.js";
import { makeSnippet } from "../snippet.js";
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

/**
 * How many matches one window ranks: the newest WINDOW matches (after the filters) below the window's top
 * row are ranked against each other by BM25 and recency; the next window starts below the oldest of them.
 */
export const SEARCH_WINDOW = 200;
/** Filters that select sessions holding at most this many indexed messages read those instead of the index. */
export const SESSION_SCAN_ROWS = 5_000;
/** The last word typed matches as a prefix of at most this many indexed words (the shortest). */
export const PREFIX_WORDS = 50;

const RUN_SQL = {
  body: "SELECT body FROM search_rows WHERE row = ?",
  pendingRows: "SELECT row FROM search_rows WHERE row > ? ORDER BY row",
  prefixTerms: "SELECT term FROM search_terms WHERE term >= ? AND term < ? LIMIT 1000",
  termSpread:
    "SELECT count(*) AS n, min(rowid) AS low FROM (SELECT rowid FROM search_words WHERE search_words MATCH ? AND rowid < ? ORDER BY rowid DESC LIMIT ?)",
  // The sessions of a page's hits, in one statement (`?` a JSON array of sids).
  sessionsOf:
    "SELECT sid, key, id, generation, state, agent, channel FROM sessions WHERE sid IN (SELECT value FROM json_each(?))",
} as const;

/** What a search reads of the index besides its tables. */
export interface SearchSource {
  sql: Statements;
  /** The highest row of `search_rows`, and the last the FTS indexes hold. */
  maxRow(): number | undefined;
  indexedUpto(): number;
  indexing: boolean;
}

/** A match of a window, scored. */
interface Scored {
  candidate: CandidateRow;
  score: number;
  top: number;
}

interface SessionOfRow {
  sid: number;
  key: string;
  id: string;
  generation: number;
  state: "active" | "archived";
  agent: string;
  channel: string;
}

/** The highest code point: `prefix || MAX_CHAR` bounds the words that begin with `prefix` from above. */
const MAX_CHAR = String.fromCodePoint(0x10ffff);

/**
 * One search of a SQLite index (the store's, or the JSONL store's sidecar). Ranks window after window of
 * matches (see SEARCH_WINDOW) until the page is full: the newest window first, its matches by score (BM25
 * times recency; lower is better) and row. A cursor holds the window's top, so the next page ranks the same
 * window again and goes on after the last hit, whatever was appended since; a deleted session's hits are
 * simply gone. Message texts are read one at a time (never a window's at once: they may be a megabyte
 * each), with the event loop let in between, and the search stops once its budget is spent
 * (`complete: false`, the hits of what it ranked).
 */
export async function searchSqlite(
  src: SearchSource,
  q: NormalisedSearch,
  options?: SearchOptions,
): Promise<SearchResult> {
  const budget = new SearchBudget(options);
  const matchers = await prefixMatchers(src, q, budget);
  const match = isCjkQuery(q) ? "" : wordsMatch(q.terms, [...(matchers.at(-1)?.expansion ?? [])]);
  const found: Scored[] = [];
  let after: SearchPosition | undefined = q.after;
  let top = q.after?.top ?? (src.maxRow() ?? 0) + 1;
  for (;;) {
    const candidates = await candidatesOf(src, q, matchers, match, top, budget);
    const window = candidates.slice(0, SEARCH_WINDOW);
    const ranked = await rank(src, q, matchers, match, window, top, budget);
    for (const scored of ranked)
      if (ranksAfter(scored.score, scored.candidate.row, after)) found.push(scored);
    const oldest = window.at(-1);
    if (budget.exhausted || found.length > q.limit || candidates.length <= SEARCH_WINDOW || !oldest) break;
    top = oldest.row;
    after = undefined;
  }
  const page = found.slice(0, q.limit);
  const sids = JSON.stringify([...new Set(page.map((s) => s.candidate.sid))]);
  const sessions = new Map(
    (src.sql.get(RUN_SQL.sessionsOf).all(sids) as SessionOfRow[]).map((s) => [s.sid, s] as const),
  );
  const hits: SearchHit[] = [];
  for (const { candidate: c } of page) {
    // A deleted session's rows go in the delete's transaction: a row without its session was deleted
    // while the search let the event loop run.
    const session = sessions.get(c.sid);
    const body = bodyOf(src, c.row);
    if (!session || body === undefined) continue;
    hits.push({
      key: session.key,
      sessionId: session.id,
      generation: session.generation,
      archived: session.state === "archived",
      seq: c.seq,
      role: c.role,
      ts: c.ts,
      agent: session.agent,
      channel: session.channel,
      snippet: makeSnippet(body, q.terms),
    });
    await budget.pace();
  }
  const last = page.at(-1);
  const result: SearchResult = { hits, indexing: src.indexing, complete: !budget.exhausted };
  if (found.length > q.limit && last)
    result.nextCursor = encodeSearchCursor({
      now: q.now,
      score: last.score,
      row: last.candidate.row,
      top: last.top,
    });
  return result;
}

function bodyOf(src: SearchSource, row: number): string | undefined {
  return src.sql.get(RUN_SQL.body).pluck().get(row) as string | undefined;
}

/**
 * Each term's matcher; the last word typed gets the indexed words it begins: those `search_terms` holds,
 * and those of the rows it does not hold the words of yet (read from their texts, within the budget).
 */
async function prefixMatchers(
  src: SearchSource,
  q: NormalisedSearch,
  budget: SearchBudget,
): Promise<TermMatcher[]> {
  const out: TermMatcher[] = [];
  for (const [i, term] of q.terms.entries()) {
    if (term.phrase || i < q.terms.length - 1 || CJK.test(term.text)) {
      out.push(termMatcher(term));
      continue;
    }
    const prefix = fold(term.text);
    const words = new Set(
      src.sql
        .get(RUN_SQL.prefixTerms)
        .pluck()
        .all(prefix, prefix + MAX_CHAR) as string[],
    );
    for (const word of await pendingWords(src, prefix, budget)) words.add(word);
    const shortest = [...words].sort((a, b) => a.length - b.length || (a < b ? -1 : 1));
    out.push(termMatcher(term, new Set([prefix, ...shortest.slice(0, PREFIX_WORDS)])));
  }
  return out;
}

/** The words that begin with `prefix` (folded) in the rows above the FTS indexes' last. */
async function pendingWords(src: SearchSource, prefix: string, budget: SearchBudget): Promise<Set<string>> {
  const words = new Set<string>();
  const rows = src.sql.get(RUN_SQL.pendingRows).pluck().all(src.indexedUpto()) as number[];
  if (rows.length === 0 || prefix === "") return words;
  const escaped = prefix.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const pattern = new RegExp(`(?<![\\p{L}\\p{N}\\p{Co}])${escaped}[\\p{L}\\p{N}\\p{Co}]*`, "gu");
  let read = 0;
  for (const row of rows) {
    if (read++ > 0 && budget.spent()) break;
    const body = bodyOf(src, row);
    if (body !== undefined) for (const [word] of fold(body).matchAll(pattern)) words.add(word);
    await budget.pace();
  }
  return words;
}

/**
 * The newest SEARCH_WINDOW + 1 matches below `top`: the rows not in the FTS indexes yet (all newer than
 * those in them), then the filtered sessions' indexed rows when they hold few, else the index's matches
 * with the filters joined; rows read here (not through FTS) are matched in this process.
 */
async function candidatesOf(
  src: SearchSource,
  q: NormalisedSearch,
  matchers: readonly TermMatcher[],
  match: string,
  top: number,
  budget: SearchBudget,
): Promise<CandidateRow[]> {
  const want = SEARCH_WINDOW + 1;
  const indexed = src.indexedUpto();
  const out: CandidateRow[] = [];
  if (top > indexed + 1) {
    const pending = pendingRowsSql(q, indexed, top);
    const rows = src.sql.get(pending.sql).all(pending.params) as CandidateRow[];
    out.push(...(await matching(src, rows, matchers, want, budget)));
  }
  if (out.length === want || budget.exhausted) return out;
  const below = Math.min(top, indexed + 1);
  if (narrowsSessions(q)) {
    const count = sessionRowsSql(q, SESSION_SCAN_ROWS + 1);
    if ((src.sql.get(count.sql).pluck().get(count.params) as number) <= SESSION_SCAN_ROWS) {
      const rows = sessionDrivenSql(q, below, SESSION_SCAN_ROWS);
      const all = src.sql.get(rows.sql).all(rows.params) as CandidateRow[];
      out.push(...(await matching(src, all, matchers, want - out.length, budget)));
      return out;
    }
  }
  const walk = indexDrivenSql(q, match, below, want - out.length);
  out.push(...(src.sql.get(walk.sql).all(walk.params) as CandidateRow[]));
  return out;
}

/** The first `want` rows whose text every matcher matches, read one at a time, within the budget. */
async function matching(
  src: SearchSource,
  rows: readonly CandidateRow[],
  matchers: readonly TermMatcher[],
  want: number,
  budget: SearchBudget,
): Promise<CandidateRow[]> {
  const out: CandidateRow[] = [];
  let read = 0;
  for (const row of rows) {
    if (out.length >= want || (read++ > 0 && budget.spent())) break;
    const body = bodyOf(src, row.row);
    if (body === undefined) continue;
    const text = new FoldedText(body);
    if (matchers.every((m) => occurrences(m, text) > 0)) out.push(row);
    await budget.pace();
  }
  return out;
}

/**
 * Scores a window: BM25 over its messages (lengths in characters, the window's mean as the average), each
 * term's document frequency estimated below `top` from how densely its newest matches lie; CJK terms count
 * 1 per matching message. Everything depends only on rows below `top`, so a page's scores are the same
 * when its cursor is followed later. Once the budget is spent, the messages not read yet are left out.
 */
async function rank(
  src: SearchSource,
  q: NormalisedSearch,
  matchers: readonly TermMatcher[],
  match: string,
  window: readonly CandidateRow[],
  top: number,
  budget: SearchBudget,
): Promise<Scored[]> {
  const docs: Array<{ c: CandidateRow; length: number; tfs: number[] }> = [];
  for (const c of window) {
    // At least one message is ranked, whatever the budget: a search always moves on.
    if (docs.length > 0 && budget.spent()) break;
    const body = bodyOf(src, c.row);
    if (body === undefined) continue;
    const text = new FoldedText(body);
    docs.push({ c, length: text.folded.length, tfs: matchers.map((m) => occurrences(m, text)) });
    await budget.pace();
  }
  const avg = Math.max(1, docs.reduce((n, d) => n + d.length, 0) / Math.max(1, docs.length));
  const rows = Math.max(1, top - 1);
  const idfs = matchers.map((m, i) => {
    if (CJK.test(m.term.text) || matchers.length === 1 || match === "") return 1;
    const termMatch =
      i === matchers.length - 1 ? wordsMatch([m.term], [...(m.expansion ?? [])]) : quoted(m.term.text);
    const spread = src.sql.get(RUN_SQL.termSpread).get(termMatch, top, SEARCH_WINDOW) as {
      n: number;
      low: number | null;
    };
    const df =
      spread.n < SEARCH_WINDOW || spread.low === null
        ? spread.n
        : (spread.n * rows) / Math.max(1, top - spread.low);
    return idf(rows, df);
  });
  const scored = docs.map(({ c, length, tfs }): Scored => {
    let rank = 0;
    matchers.forEach((m, i) => {
      const tf = tfs[i] ?? 0;
      rank -= CJK.test(m.term.text) ? 1 : bm25Part(idfs[i] ?? 1, Math.max(1, tf), length, avg);
    });
    return { candidate: c, score: recencyScore(rank, c.ts, q.now), top };
  });
  return scored.sort((a, b) => a.score - b.score || a.candidate.row - b.candidate.row);
}
