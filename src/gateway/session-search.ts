import type { Engine } from "../engine.js";
import type { Session } from "../model/session.js";
import { encodeCursor } from "../store/session-query.js";
import type { SessionQuery } from "../store/store.js";

/**
 * The most sessions one text search reads before it answers. A search over a million sessions never reads
 * them all per keystroke: it reads at most this many (in index order, through the store's cursor) and, if
 * it stopped early, says so with a cursor that continues where it stopped.
 */
export const SEARCH_SCAN_LIMIT = 5000;
const SCAN_PAGE = 1000;

export interface SearchPage {
  sessions: Session[];
  nextCursor?: string;
  /** How many sessions this request read. */
  scanned: number;
  /** True when the scan limit, not the end of the list, stopped the search: `nextCursor` searches further. */
  partial: boolean;
}

/** Whether a session's key or title contains `text`, ignoring case. */
export function matchesText(session: Session, text: string): boolean {
  const needle = text.toLowerCase();
  return session.key.toLowerCase().includes(needle) || session.title.toLowerCase().includes(needle);
}

/** One page of the sessions `query` lists whose key or title contains `text`, reading at most `scanLimit`. */
export async function searchSessions(
  engine: Engine,
  query: SessionQuery,
  text: string,
  scanLimit = SEARCH_SCAN_LIMIT,
): Promise<SearchPage> {
  const limit = query.limit ?? 50;
  const sort = query.sort ?? "created";
  const found: Session[] = [];
  let cursor = query.cursor;
  let scanned = 0;
  for (;;) {
    const page = await engine.sessions.list({
      ...query,
      limit: Math.min(SCAN_PAGE, scanLimit - scanned),
      ...(cursor !== undefined ? { cursor } : {}),
    });
    for (const session of page.sessions) {
      scanned++;
      // Incognito sessions are listed, never found by what they hold (their titles come from their text).
      if (!matchesText(session, text) || engine.isIncognito(session.key)) continue;
      found.push(session);
      if (found.length === limit) {
        const more = page.nextCursor !== undefined || session !== page.sessions.at(-1);
        return more
          ? { sessions: found, nextCursor: encodeCursor(sort, session), scanned, partial: false }
          : { sessions: found, scanned, partial: false };
      }
    }
    if (page.nextCursor === undefined) return { sessions: found, scanned, partial: false };
    cursor = page.nextCursor;
    if (scanned >= scanLimit) return { sessions: found, nextCursor: cursor, scanned, partial: true };
  }
}
