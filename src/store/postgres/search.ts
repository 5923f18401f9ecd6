import type { Pool } from "pg";
import { SearchBudget, type SearchOptions } from "../../search/budget.js";
import { CJK } from "../../search/indexed-text.js";
import {
  encodeSearchCursor,
  type NormalisedSearch,
  ranksAfter,
  type SearchHit,
  type SearchPosition,
  type SearchResult,
  type SearchRole,
} from "../../search/query.js";
import { recencyScore } from "../../search/rank.js";
import { makeSnippet } from "../../search/snippet.js";
import { inTransaction, isConnectionError, unavailable } from "./pool.js";
import { tsqueryOf } from "./search-words.js";

/** How many matches one window ranks, as on SQLite (`SEARCH_WINDOW`): the newest ones below its top. */
export const PG_SEARCH_WINDOW = 200;

/** A match as the window query returns it, newest (highest `n`) first: its entry's JSON as stored. */
interface CandidateRow {
  n: number;
  seq: number;
  ts: number;
  data: string;
  relevance: number;
  key: string;
  id: string;
  generation: number;
  state: "active" | "archived";
  agent: string;
  channel: string;
}

interface Scored {
  row: CandidateRow;
  score: number;
  top: number;
}

/** An entry's indexed text when it has CJK (migration 4), what the trigram index holds. */
const CJK_TEXT = "e.search_cjk";

/** SQL with numbered parameters, built a condition at a time. */
class Conditions {
  readonly where: string[] = [];
  readonly params: unknown[] = [];
  /** Whether a condition reads the session (`s`). */
  sessions = false;
  param(value: unknown): string {
    this.params.push(value);
    return `$${this.params.length}`;
  }
}

/** The words part of a query (search-words.ts folds and splits it as it did the entries' words). */
function wordsQuery(q: NormalisedSearch, c: Conditions): string | undefined {
  const words = tsqueryOf(q.terms);
  return words === undefined ? undefined : `${c.param(words)}::tsquery`;
}

/** The filters, and each CJK term as a substring of the text (the trigram index answers ILIKE). */
function filters(q: NormalisedSearch, c: Conditions): void {
  for (const term of q.terms)
    if (CJK.test(term.text))
      c.where.push(`${CJK_TEXT} ILIKE ${c.param(`%${term.text.replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`)}`);
  if (q.role) c.where.push(`e.data::jsonb->>'role' = ${c.param(q.role)}`);
  if (q.since !== undefined) c.where.push(`e.ts >= ${c.param(Math.ceil(q.since))}`);
  if (q.until !== undefined) c.where.push(`e.ts < ${c.param(Math.ceil(q.until))}`);
  const before = c.where.length;
  if (q.agent) c.where.push(`s.agent = ${c.param(q.agent)}`);
  if (q.channel) c.where.push(`s.channel = ${c.param(q.channel)}`);
  if (q.keyPrefix) {
    const prefix = c.param(q.keyPrefix);
    // The range reads the (key, generation) index; starts_with keeps the test exact.
    c.where.push(`s.key >= ${prefix} AND starts_with(s.key, ${prefix})`);
  }
  if (q.archived !== "include")
    c.where.push(q.archived === "only" ? "s.state = 'archived'" : "s.state = 'active'");
  c.sessions = c.where.length > before;
}

/**
 * The newest PG_SEARCH_WINDOW + 1 matches below `top` (a first page: all) with their relevance: `ts_rank_cd`
 * of the words (normalised by the log of the text's length), plus 1 per CJK term.
 *
 * The window is chosen from the entries alone (sessions joined inside only when a filter reads them), then
 * each of its rows gets its session by its sid (a lateral lookup: for a window the planner would rather scan and
 * hash all sessions, 1.1-5.7 ms on 10,000 of them) and its relevance. The text and role come back as the
 * stored JSON, parsed here: parsing it twice more on the server per row cost more than the window's walk.
 */
export function windowSql(q: NormalisedSearch, top: number | undefined): { sql: string; params: unknown[] } {
  const c = new Conditions();
  const words = wordsQuery(q, c);
  const cjk = q.terms.filter((t) => CJK.test(t.text)).length;
  c.where.push(words ? `e.search_words @@ ${words}` : "e.search_words IS NOT NULL");
  if (top !== undefined) c.where.push(`e.n < ${c.param(top)}`);
  filters(q, c);
  const relevance = words ? `ts_rank_cd(e.search_words, ${words}, 1) + ${cjk}` : `${cjk}`;
  const sessions = c.sessions ? " JOIN sessions s ON s.sid = e.sid" : "";
  const sql = `SELECT e.n, e.seq, e.ts, e.data, (${relevance})::float8 AS relevance, s.key, s.id, s.generation,
  s.state, s.agent, s.channel
FROM (SELECT e.n, e.sid, e.seq, e.ts, e.data, e.search_words FROM entries e${sessions}
  WHERE ${c.where.join(" AND ")}
  ORDER BY e.n DESC LIMIT ${c.param(PG_SEARCH_WINDOW + 1)}) e
CROSS JOIN LATERAL (SELECT s.key, s.id, s.generation, s.state, s.agent, s.channel FROM sessions s
  WHERE s.sid = e.sid OFFSET 0) s
ORDER BY e.n DESC`;
  return { sql, params: c.params };
}

/** A match's role and text: only indexed messages (indexed-text.ts) have words or CJK text. */
function messageOf(data: string): { role: SearchRole; text: string } {
  const message = JSON.parse(data) as { role: SearchRole; content: string };
  return { role: message.role, text: message.content };
}

/**
 * Search over PostgreSQL (migrations 3 and 4): the words are columns of the entry row, written with it
 * (search-words.ts), so whatever an acknowledged append committed is found, a deleted session's rows are gone with it, and resets and rekeys
 * (session rows) need nothing. Ranked as on SQLite: window after window of the newest matches, each by
 * relevance times recency (`recencyScore`; lower is better) and `n`; a cursor holds its window's top, so
 * the next page ranks the same window again whatever was appended since. A first page's window has no
 * top: its newest match is the newest there is, so one above it is the top its cursor keeps.
 */
export async function searchPostgres(
  pool: Pool,
  q: NormalisedSearch,
  options?: SearchOptions,
): Promise<SearchResult> {
  const budget = new SearchBudget(options);
  const found: Scored[] = [];
  let after: SearchPosition | undefined = q.after;
  let top = q.after?.top;
  for (;;) {
    const { sql, params } = windowSql(q, top);
    const candidates = await windowWithin(pool, sql, params, budget);
    if (!candidates) break;
    const window = candidates.slice(0, PG_SEARCH_WINDOW);
    const windowTop = top ?? (window[0]?.n ?? 0) + 1;
    const ranked = window
      .map((row): Scored => ({ row, score: recencyScore(-row.relevance, row.ts, q.now), top: windowTop }))
      .sort((a, b) => a.score - b.score || a.row.n - b.row.n);
    for (const scored of ranked) if (ranksAfter(scored.score, scored.row.n, after)) found.push(scored);
    const oldest = window.at(-1);
    if (budget.spent() || found.length > q.limit || candidates.length <= PG_SEARCH_WINDOW || !oldest) break;
    top = oldest.n;
    after = undefined;
  }
  const page = found.slice(0, q.limit);
  const hits = page.map(({ row }): SearchHit => {
    const { role, text } = messageOf(row.data);
    return {
      key: row.key,
      sessionId: row.id,
      generation: row.generation,
      archived: row.state === "archived",
      seq: row.seq,
      role,
      ts: row.ts,
      agent: row.agent,
      channel: row.channel,
      snippet: makeSnippet(text, q.terms),
    };
  });
  const result: SearchResult = { hits, indexing: false, complete: !budget.exhausted };
  const last = page.at(-1);
  if (found.length > q.limit && last)
    result.nextCursor = encodeSearchCursor({ now: q.now, score: last.score, row: last.row.n, top: last.top });
  return result;
}

/** PostgreSQL's code for a statement cancelled by `statement_timeout`. */
const QUERY_CANCELED = "57014";

/**
 * A window's query, cancelled by the server once the search's budget is spent (`statement_timeout`, at
 * least 1 ms): undefined then, and the search returns what the windows before found.
 */
async function windowWithin(
  pool: Pool,
  sql: string,
  params: unknown[],
  budget: SearchBudget,
): Promise<CandidateRow[] | undefined> {
  const ms = Math.max(1, Math.ceil(budget.remainingMs()));
  try {
    return await inTransaction(pool, async (client) => {
      await client.query(`SET LOCAL statement_timeout = ${ms}`);
      return (await client.query<CandidateRow>(sql, params)).rows;
    });
  } catch (error) {
    if ((error as { code?: unknown }).code === QUERY_CANCELED) {
      budget.exhausted = true;
      return undefined;
    }
    throw isConnectionError(error) ? unavailable(error, "not-written") : error;
  }
}
