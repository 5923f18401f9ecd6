import { SessiondError } from "../model/errors.js";
import type { ArchivedFilter, SearchQuery, SearchRole } from "./query.js";

/** The names a search takes as text (query string, WS params, CLI options), besides `q`. */
export const SEARCH_PARAMS = [
  "agent",
  "channel",
  "prefix",
  "role",
  "since",
  "until",
  "archived",
  "limit",
  "cursor",
] as const;

const invalid = (message: string): SessiondError => new SessiondError("INVALID_ARGUMENT", message);

/** A time as ms since the epoch or an ISO 8601 date (`2026-01-31`, `2026-01-31T12:00:00Z`). */
export function parseTime(name: string, value: string): number {
  const ms = /^\d+$/.test(value) ? Number(value) : Date.parse(value);
  if (!Number.isFinite(ms)) throw invalid(`${name} must be an ISO 8601 date or ms since the epoch`);
  return ms;
}

/** A search from text parameters (`q` and SEARCH_PARAMS); the values are checked by `normaliseSearch`. */
export function searchQueryFrom(text: string, get: (name: string) => string | undefined): SearchQuery {
  const query: SearchQuery = { text };
  const value = (name: string): string | undefined => {
    const v = get(name)?.trim();
    return v === undefined || v === "" ? undefined : v;
  };
  const agent = value("agent");
  const channel = value("channel");
  const prefix = value("prefix");
  const role = value("role");
  const since = value("since");
  const until = value("until");
  const archived = value("archived");
  const limit = value("limit");
  const cursor = value("cursor");
  if (agent) query.agent = agent;
  if (channel) query.channel = channel;
  if (prefix) query.keyPrefix = prefix;
  if (role) query.role = role as SearchRole;
  if (since) query.since = parseTime("since", since);
  if (until) query.until = parseTime("until", until);
  if (archived) query.archived = archived as ArchivedFilter;
  if (limit) {
    if (!/^\d+$/.test(limit)) throw invalid("limit must be an integer from 1 to 100");
    query.limit = Number(limit);
  }
  if (cursor) query.cursor = cursor;
  return query;
}
