import { SessiondError } from "../model/errors.js";
import type { Session } from "../model/session.js";
import { cloneSession } from "./session-log.js";
import type { SessionQuery, SessionScan, SessionSort } from "./store.js";

export const DEFAULT_PAGE = 50;
export const MAX_PAGE = 1000;

/** Where the previous page ended: the last session's sort position. */
export interface CursorPosition {
  sort: SessionSort;
  id: string;
  lastActivityAt: number;
}

export interface NormalisedQuery extends Omit<SessionQuery, "cursor" | "limit" | "sort"> {
  sort: SessionSort;
  limit: number;
  after?: CursorPosition;
}

export function normaliseQuery(query: SessionQuery = {}): NormalisedQuery {
  const sort = query.sort ?? "created";
  if (sort !== "created" && sort !== "activity") {
    throw new SessiondError(
      "INVALID_ARGUMENT",
      `sort must be "created" or "activity", not ${JSON.stringify(sort)}`,
    );
  }
  const limit = query.limit ?? DEFAULT_PAGE;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE) {
    throw new SessiondError("INVALID_ARGUMENT", `limit must be an integer from 1 to ${MAX_PAGE}`);
  }
  const { cursor, limit: _l, sort: _s, ...filters } = query;
  const normalised: NormalisedQuery = { ...filters, sort, limit };
  if (cursor !== undefined) {
    const after = decodeCursor(cursor);
    if (after.sort !== sort)
      throw new SessiondError("INVALID_ARGUMENT", "the cursor belongs to another sort order");
    normalised.after = after;
  }
  return normalised;
}

export function encodeCursor(sort: SessionSort, last: Session): string {
  const position = sort === "created" ? [sort, last.id] : [sort, last.id, last.lastActivityAt];
  return Buffer.from(JSON.stringify(position)).toString("base64url");
}

function decodeCursor(cursor: string): CursorPosition {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    if (Array.isArray(value) && typeof value[1] === "string") {
      if (value[0] === "created") return { sort: "created", id: value[1], lastActivityAt: 0 };
      if (value[0] === "activity" && Number.isInteger(value[2])) {
        return { sort: "activity", id: value[1], lastActivityAt: value[2] };
      }
    }
  } catch {
    // falls through to the error below
  }
  throw new SessiondError(
    "INVALID_ARGUMENT",
    "invalid cursor: pass the nextCursor of a previous page unchanged",
  );
}

/** Orders sessions as a page lists them: newest first by the query's sort, ties by id. */
export function compareForPage(sort: SessionSort, a: Session, b: Session): number {
  if (sort === "activity" && a.lastActivityAt !== b.lastActivityAt)
    return b.lastActivityAt - a.lastActivityAt;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

/** Whether a session passes the query's filters and lies after its cursor. */
export function matchesQuery(query: NormalisedQuery, session: Session): boolean {
  if (!query.includeArchived && session.state !== "active") return false;
  if (query.agent !== undefined && session.agent !== query.agent) return false;
  if (query.channel !== undefined && session.channel !== query.channel) return false;
  if (query.activeSince !== undefined && session.lastActivityAt < query.activeSince) return false;
  if (query.after) {
    const pivot = { id: query.after.id, lastActivityAt: query.after.lastActivityAt } as Session;
    return compareForPage(query.sort, pivot, session) < 0;
  }
  return true;
}

export const MAX_SCAN = 10_000;

export function normaliseScan(scan: SessionScan): SessionScan & { limit: number } {
  const limit = scan.limit ?? 1000;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_SCAN) {
    throw new SessiondError("INVALID_ARGUMENT", `scan limit must be an integer from 1 to ${MAX_SCAN}`);
  }
  if (scan.state !== "active" && scan.state !== "archived") {
    throw new SessiondError("INVALID_ARGUMENT", 'scan state must be "active" or "archived"');
  }
  return { ...scan, limit };
}

/** The time a scan orders by: last activity for current sessions, archiving time for archived ones. */
export function scanTime(session: Session): number {
  return session.state === "archived" ? (session.archivedAt ?? 0) : session.lastActivityAt;
}

export function matchesScan(scan: SessionScan, session: Session): boolean {
  if (session.state !== scan.state) return false;
  const time = scanTime(session);
  if (scan.state === "active" && scan.inactiveBefore !== undefined && !(time < scan.inactiveBefore))
    return false;
  if (scan.state === "archived" && scan.archivedBefore !== undefined && !(time < scan.archivedBefore))
    return false;
  if (scan.keyPrefix !== undefined && !session.key.startsWith(scan.keyPrefix)) return false;
  if (scan.after && (time < scan.after.time || (time === scan.after.time && session.id <= scan.after.id)))
    return false;
  return true;
}

export function compareScan(a: Session, b: Session): number {
  return scanTime(a) - scanTime(b) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** One page of `sessions` for a list, as a driver that holds them in memory answers it (`StoreDriver.list`). */
export function pageOf(query: NormalisedQuery, sessions: Iterable<Session>): Session[] {
  const matching: Session[] = [];
  for (const session of sessions) if (matchesQuery(query, session)) matching.push(session);
  return matching
    .sort((a, b) => compareForPage(query.sort, a, b))
    .slice(0, query.limit + 1)
    .map(cloneSession);
}

/** Sessions for a sweep, as a driver that holds them in memory answers it (`StoreDriver.scan`). */
export function sweepOf(scan: SessionScan & { limit: number }, sessions: Iterable<Session>): Session[] {
  const matching: Session[] = [];
  for (const session of sessions) if (matchesScan(scan, session)) matching.push(session);
  return matching.sort(compareScan).slice(0, scan.limit).map(cloneSession);
}

/** The sessions among `sessions` forked (or rewound) from one of `sessionIds`, as copies: a scan, for stores held in memory. */
export function forksAmong(sessions: Iterable<Session>, sessionIds: readonly string[]): Session[] {
  const wanted = new Set(sessionIds);
  const forks: Session[] = [];
  for (const session of sessions) {
    const origin = session.forkedFrom;
    if (origin && wanted.has(origin.sessionId)) forks.push(cloneSession(session));
  }
  return forks;
}
