import { SessiondError } from "../model/errors.js";

/** Which generations a search looks in: current sessions, archived ones, or both (default). */
export type ArchivedFilter = "include" | "exclude" | "only";
export type SearchRole = "user" | "assistant";

export interface SearchQuery {
  /** The words to find (all of them, any order; `"a phrase"` in double quotes as written). 1..200 characters. */
  text: string;
  agent?: string;
  channel?: string;
  /** Only keys that start with this. */
  keyPrefix?: string;
  role?: SearchRole;
  /** Only messages at or after this time (ms since epoch). */
  since?: number;
  /** Only messages before this time. */
  until?: number;
  archived?: ArchivedFilter;
  /** 1..100, default 20. */
  limit?: number;
  /** The `nextCursor` of the previous page. */
  cursor?: string;
}

export interface SearchHit {
  key: string;
  sessionId: string;
  generation: number;
  /** True when the hit's generation has been reset (archived). */
  archived: boolean;
  seq: number;
  role: SearchRole;
  ts: number;
  agent: string;
  channel: string;
  /** Escaped HTML: the text around the matches, each match in `<mark>`, secret-shaped strings masked. */
  snippet: string;
  /** The forks (and rewound generations) whose history includes this message: it is theirs too. */
  inheritedBy?: Array<{ key: string; sessionId: string }>;
}

export interface SearchResult {
  hits: SearchHit[];
  /** Absent on the last page. */
  nextCursor?: string;
  /** True while the store's index is still being built: messages not indexed yet are not found. */
  indexing: boolean;
  /**
   * False when the search ran out of its time budget: the hits are the best of the messages it read, and
   * others may match (narrow the search: more words, a filter).
   */
  complete: boolean;
}

/** One parsed search term: a word (prefix-matched when it is the last one typed) or a quoted phrase. */
export interface SearchTerm {
  text: string;
  phrase: boolean;
}

/**
 * Where the previous page stopped: its ranking's clock, the last hit's score and row, and (SQLite) the
 * upper row bound of the window of matches that hit was ranked in.
 */
export interface SearchPosition {
  now: number;
  score: number;
  row: number;
  top?: number;
}

export interface NormalisedSearch extends Omit<SearchQuery, "cursor" | "limit" | "archived"> {
  terms: SearchTerm[];
  archived: ArchivedFilter;
  limit: number;
  /** The ranking's "now": fixed by the first page so that scores, and the cursor, stay stable. */
  now: number;
  after?: SearchPosition;
}

export const SEARCH_MAX_TEXT = 200;
export const SEARCH_MAX_LIMIT = 100;
const DEFAULT_LIMIT = 20;
const MAX_TERMS = 16;

const invalid = (message: string): SessiondError => new SessiondError("INVALID_ARGUMENT", message);

/** Splits the text into words and `"quoted phrases"`; punctuation separates words. */
export function parseTerms(text: string): SearchTerm[] {
  const terms: SearchTerm[] = [];
  for (const match of text.matchAll(/"([^"]*)"?|[^\s"]+/g)) {
    const phrase = match[1] !== undefined;
    const words = (match[1] ?? match[0]).match(/[\p{L}\p{N}\p{M}_]+/gu) ?? [];
    if (words.length === 0) continue;
    if (phrase) terms.push({ text: words.join(" "), phrase: true });
    else for (const word of words) terms.push({ text: word, phrase: false });
  }
  return terms;
}

/** Checks a query and fills in its defaults; `now` is the ranking clock of a first page. */
export function normaliseSearch(query: SearchQuery, now: number): NormalisedSearch {
  const text = typeof query.text === "string" ? query.text.trim() : "";
  if (text === "") throw invalid("the search text is empty");
  if (text.length > SEARCH_MAX_TEXT)
    throw invalid(`the search text must be at most ${SEARCH_MAX_TEXT} characters`);
  const terms = parseTerms(text);
  if (terms.length === 0) throw invalid("the search text has no words to find");
  if (terms.length > MAX_TERMS) throw invalid(`the search text may have at most ${MAX_TERMS} words`);
  const limit = query.limit ?? DEFAULT_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > SEARCH_MAX_LIMIT)
    throw invalid(`limit must be an integer from 1 to ${SEARCH_MAX_LIMIT}`);
  const archived = query.archived ?? "include";
  if (!["include", "exclude", "only"].includes(archived))
    throw invalid("archived must be include, exclude or only");
  if (query.role !== undefined && query.role !== "user" && query.role !== "assistant")
    throw invalid("role must be user or assistant");
  for (const name of ["since", "until"] as const) {
    const value = query[name];
    if (value !== undefined && !Number.isFinite(value))
      throw invalid(`${name} must be a time in ms since the epoch`);
  }
  const after = query.cursor === undefined ? undefined : decodeSearchCursor(query.cursor);
  const out: NormalisedSearch = { text, terms, archived, limit, now: after?.now ?? now };
  if (after) out.after = after;
  for (const name of ["agent", "channel", "keyPrefix", "role", "since", "until"] as const) {
    const value = query[name];
    if (value !== undefined && value !== "") Object.assign(out, { [name]: value });
  }
  return out;
}

/** True when a hit of this score and row ranks after `after` (score, then row, ascending), or there is none. */
export function ranksAfter(score: number, row: number, after: SearchPosition | undefined): boolean {
  return !after || score > after.score || (score === after.score && row > after.row);
}

export function encodeSearchCursor(position: SearchPosition): string {
  const fields = [position.now, position.score, position.row];
  if (position.top !== undefined) fields.push(position.top);
  return Buffer.from(JSON.stringify(fields)).toString("base64url");
}

function decodeSearchCursor(cursor: string): SearchPosition {
  try {
    const [now, score, row, top] = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as unknown[];
    if (typeof now === "number" && typeof score === "number" && typeof row === "number") {
      if (typeof top === "number") return { now, score, row, top };
      if (top === undefined) return { now, score, row };
    }
  } catch {
    // Reported below.
  }
  throw invalid("invalid cursor: pass the nextCursor of a previous page unchanged");
}

/** The recency half of the ranking: a match's weight halves every 30 days of age. */
export const RECENCY_HALF_LIFE_MS = 30 * 24 * 3600_000;
