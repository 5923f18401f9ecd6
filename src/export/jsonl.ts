import type { Entry } from "../model/entry.js";
import type { Session } from "../model/session.js";
import { orderSessions } from "./sessions.js";

/**
 * CrabTalk's session file (behaviours.md §2): a metadata line, then `{"role","content"}` per message and
 * `{"compact": summary}` per compaction. sessiond's own fields ride along on each line (CrabTalk ignores
 * unknown fields); entries CrabTalk has no line for carry a `type` field instead.
 */
export function exportJsonl(sessions: readonly Session[], entries: readonly Entry[]): string {
  const { current, generations } = orderSessions(sessions);
  const several = generations.length > 1;
  const metadata = {
    agent: current.agent,
    created_by: current.createdBy,
    created_at: new Date(current.createdAt).toISOString(),
    title: current.title,
    uptime_secs: Math.max(0, Math.floor((current.lastActivityAt - current.createdAt) / 1000)),
    key: current.key,
    session_id: current.id,
    generation: current.generation,
    ...(several
      ? {
          generations: generations.map((s) => ({
            session_id: s.id,
            generation: s.generation,
            created_at: new Date(s.createdAt).toISOString(),
            ...(s.archivedAt !== undefined ? { archived_at: new Date(s.archivedAt).toISOString() } : {}),
          })),
        }
      : {}),
  };
  const lines = [metadata, ...entries.map((entry) => entryLine(entry, several))];
  return lines.map((line) => `${JSON.stringify(line)}\n`).join("");
}

function entryLine(entry: Entry, withSessionId: boolean): Record<string, unknown> {
  const { id, sessionId, seq, ts, idempotencyKey, ...body } = entry;
  const header = {
    seq,
    id,
    ts,
    ...(withSessionId ? { sessionId } : {}),
    ...(idempotencyKey !== undefined ? { idempotencyKey } : {}),
  };
  switch (body.type) {
    case "message": {
      const { type: _type, role, content, ...rest } = body;
      return { role, content, ...header, ...rest };
    }
    case "compaction": {
      const { type: _type, summary, ...rest } = body;
      return { compact: summary, ...header, ...rest };
    }
    default:
      return { ...body, ...header };
  }
}
