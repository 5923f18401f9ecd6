import type { Engine } from "../engine.js";
import { entryText, estimateTokens } from "../model/entry.js";

const HOUR = 3_600_000;
/** At most this many recently active sessions are read for one overview. */
export const OVERVIEW_SESSION_LIMIT = 2000;
/** At most this many entries of one session, newest first. */
export const OVERVIEW_ENTRY_LIMIT = 2000;
const ENTRY_PAGE = 500;

export interface HourBucket {
  /** Start of the hour (ms since epoch). */
  at: number;
  /** Sessions with at least one entry in this hour. */
  activeSessions: number;
  messages: number;
  /** Estimated tokens (bytes / 4) of the messages. */
  tokens: number;
  compactions: number;
}

export interface Overview {
  from: number;
  to: number;
  hours: HourBucket[];
  /** `sessions`: sessions with at least one entry in the window. */
  totals: { sessions: number; messages: number; tokens: number; compactions: number };
  /** True when a limit cut the reading short: the figures are then lower bounds. */
  truncated: boolean;
}

/**
 * Per-hour activity over the last `hours` hours, from bounded reads: the sessions active in the window
 * (the store's activity index, newest first, at most OVERVIEW_SESSION_LIMIT) and, of each, its entries
 * newest first until the window starts (at most OVERVIEW_ENTRY_LIMIT). Current sessions only.
 */
export async function overview(engine: Engine, hours: number, now = Date.now()): Promise<Overview> {
  const to = Math.floor(now / HOUR) * HOUR + HOUR;
  const from = to - hours * HOUR;
  const buckets: HourBucket[] = Array.from({ length: hours }, (_, i) => ({
    at: from + i * HOUR,
    activeSessions: 0,
    messages: 0,
    tokens: 0,
    compactions: 0,
  }));
  let truncated = false;
  let sessions = 0;
  let withEntries = 0;
  let cursor: string | undefined;
  do {
    const page = await engine.sessions.list({
      sort: "activity",
      activeSince: from,
      limit: Math.min(1000, OVERVIEW_SESSION_LIMIT - sessions),
      ...(cursor !== undefined ? { cursor } : {}),
    });
    for (const session of page.sessions) {
      sessions++;
      const seen = new Set<number>();
      let beforeSeq = session.entryCount + 1;
      let read = 0;
      while (beforeSeq > 1) {
        const entries = await engine.store.readEntries(session.id, {
          beforeSeq,
          order: "desc",
          limit: ENTRY_PAGE,
        });
        if (entries.length === 0) break;
        let reachedStart = false;
        for (const entry of entries) {
          if (entry.ts < from) {
            reachedStart = true;
            break;
          }
          const bucket = buckets[Math.floor((entry.ts - from) / HOUR)];
          if (!bucket) continue;
          if (!seen.has(bucket.at)) {
            seen.add(bucket.at);
            bucket.activeSessions++;
          }
          if (entry.type === "message") {
            bucket.messages++;
            bucket.tokens += estimateTokens(entryText(entry));
          } else if (entry.type === "compaction") {
            bucket.compactions++;
          }
        }
        read += entries.length;
        if (read === entries.length && entries[0] && entries[0].ts >= from) withEntries++;
        beforeSeq = entries.at(-1)!.seq;
        if (reachedStart) break;
        if (read >= OVERVIEW_ENTRY_LIMIT) {
          truncated = true;
          break;
        }
      }
    }
    cursor = page.nextCursor;
    if (cursor !== undefined && sessions >= OVERVIEW_SESSION_LIMIT) {
      truncated = true;
      break;
    }
  } while (cursor !== undefined);
  const totals = { sessions: withEntries, messages: 0, tokens: 0, compactions: 0 };
  for (const bucket of buckets) {
    totals.messages += bucket.messages;
    totals.tokens += bucket.tokens;
    totals.compactions += bucket.compactions;
  }
  return { from, to, hours: buckets, totals, truncated };
}
