import { CJK } from "../indexed-text.js";
import type { NormalisedSearch, SearchTerm } from "../query.js";

/** A match as the candidate queries return it, newest (highest row) first; its text is read when needed. */
export interface CandidateRow {
  row: number;
  sid: number;
  seq: number;
  role: "user" | "assistant";
  ts: number;
}

export interface CandidateSql {
  sql: string;
  params: Record<string, unknown>;
}

/** An FTS5 string: double quotes doubled. */
export const quoted = (text: string): string => `"${text.replaceAll('"', '""')}"`;

/** The highest code point: `prefix || MAX_CHAR` bounds the keys that start with `prefix` from above. */
const MAX_CHAR = String.fromCodePoint(0x10ffff);

const CANDIDATE_COLUMNS = "r.row, r.sid, r.seq, r.role, r.ts";

/** True when the query asks for CJK text, which the trigram index (and LIKE) answers. */
export const isCjkQuery = (q: NormalisedSearch): boolean => q.terms.some((t) => CJK.test(t.text));

/** True when a filter narrows the sessions (so that reading their rows may beat scanning the matches). */
export const narrowsSessions = (q: NormalisedSearch): boolean =>
  q.keyPrefix !== undefined || q.agent !== undefined || q.channel !== undefined || q.archived === "only";

/** The filters on the session (`s`) and on the index row (`r`), as SQL and parameters. */
function filters(q: NormalisedSearch, params: Record<string, unknown>): string[] {
  const where: string[] = [];
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
    params.prefixEnd = q.keyPrefix + MAX_CHAR;
    // The range reads the (key, generation) index; substr keeps the test exact.
    where.push("s.key >= @prefix AND s.key < @prefixEnd AND substr(s.key, 1, length(@prefix)) = @prefix");
  }
  if (q.archived !== "include")
    where.push(q.archived === "only" ? "s.state = 'archived'" : "s.state = 'active'");
  return where;
}

const joinsSessions = (where: readonly string[]): boolean => where.some((w) => w.includes("s."));

/**
 * The newest `limit` matches below row `top`, driven by the index: FTS5 walks the matches in descending
 * rowid order (without ranking them) and the filters are checked on each through the joins, so the walk
 * stops after `limit` that pass. `match` is the word index's MATCH expression; a CJK query walks the
 * trigram index instead (terms of 3+ characters), shorter CJK terms tested with LIKE on the text. `top`
 * is at most one above the index's last row: the rows above it are not in the FTS indexes yet.
 */
export function indexDrivenSql(q: NormalisedSearch, match: string, top: number, limit: number): CandidateSql {
  const params: Record<string, unknown> = { top, limit };
  const where = filters(q, params);
  let from: string;
  let order = "r.row";
  if (!isCjkQuery(q)) {
    params.match = match;
    from = "search_words w CROSS JOIN search_rows r ON r.row = w.rowid";
    where.unshift("search_words MATCH @match", "w.rowid < @top");
    order = "w.rowid";
  } else {
    const long = q.terms.filter((t) => [...t.text].length >= 3);
    q.terms
      .filter((t) => [...t.text].length < 3)
      .forEach((t, i) => {
        params[`like${i}`] = `%${t.text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
        where.push(`r.body LIKE @like${i} ESCAPE '\\'`);
      });
    if (long.length > 0) {
      params.match = long.map((t) => quoted(t.text)).join(" ");
      from = "search_grams g CROSS JOIN search_rows r ON r.row = g.rowid";
      where.unshift("search_grams MATCH @match", "g.rowid < @top");
      order = "g.rowid";
    } else {
      from = "search_rows r";
      where.unshift("r.row < @top");
    }
  }
  const sessions = joinsSessions(where) ? " CROSS JOIN sessions s ON s.sid = r.sid" : "";
  const sql = `SELECT ${CANDIDATE_COLUMNS} FROM ${from}${sessions} WHERE ${where.join(" AND ")} ORDER BY ${order} DESC LIMIT @limit`;
  return { sql, params };
}

/**
 * The rows above `indexed` (not in the FTS indexes yet) and below `top` that the filters keep, newest
 * first: a search matches their text itself.
 */
export function pendingRowsSql(q: NormalisedSearch, indexed: number, top: number): CandidateSql {
  const params: Record<string, unknown> = { indexed, top };
  const where = ["r.row > @indexed", "r.row < @top", ...filters(q, params)];
  const sessions = joinsSessions(where) ? " CROSS JOIN sessions s ON s.sid = r.sid" : "";
  const sql = `SELECT ${CANDIDATE_COLUMNS} FROM search_rows r${sessions} WHERE ${where.join(" AND ")} ORDER BY r.row DESC`;
  return { sql, params };
}

/**
 * Every indexed row below `top` of the sessions the filters select, newest first, at most `limit`:
 * read from the sessions through `search_sids`, the words matched afterwards (in this process).
 */
export function sessionDrivenSql(q: NormalisedSearch, top: number, limit: number): CandidateSql {
  const params: Record<string, unknown> = { top, limit };
  const where = [...filters(q, params), "r.row < @top"];
  const sql = `SELECT ${CANDIDATE_COLUMNS} FROM sessions s CROSS JOIN search_sids x ON x.sid = s.sid
CROSS JOIN search_rows r ON r.row = x.row WHERE ${where.join(" AND ")} ORDER BY r.row DESC LIMIT @limit`;
  return { sql, params };
}

/** How many indexed rows the sessions the filters select hold, counted up to `cap` (their row filters aside). */
export function sessionRowsSql(q: NormalisedSearch, cap: number): CandidateSql {
  const params: Record<string, unknown> = { cap };
  const where = filters(q, params).filter((w) => !w.startsWith("r."));
  const sql = `SELECT count(*) FROM (SELECT 1 FROM sessions s CROSS JOIN search_sids x ON x.sid = s.sid
WHERE ${where.join(" AND ")} LIMIT @cap)`;
  return { sql, params };
}

/**
 * The word index's MATCH expression: every term must occur, phrases as written; the last word typed (not
 * in quotes) as any of the indexed words it begins (`expansion`), itself always among them.
 */
export function wordsMatch(terms: readonly SearchTerm[], expansion: readonly string[]): string {
  return terms
    .map((t, i) => {
      if (t.phrase || i < terms.length - 1) return quoted(t.text);
      const words = [...new Set([t.text, ...expansion])];
      return words.length === 1 ? quoted(t.text) : `(${words.map(quoted).join(" OR ")})`;
    })
    .join(" AND ");
}
