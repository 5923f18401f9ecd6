import type { Entry } from "../model/entry.js";
import type { Session } from "../model/session.js";
import { entryLines, metadataLine } from "../store/jsonl/crabtalk-format.js";
import { encodeLine } from "../store/jsonl/json-line.js";
import { orderSessions } from "./sessions.js";

/**
 * CrabTalk's session file (behaviours.md §2), written by the JSONL store's own encoder: the metadata
 * line (with the current title), then one line per entry. Lines of several generations carry their
 * `sessionId`, and the metadata line lists the generations.
 */
export function exportJsonl(sessions: readonly Session[], entries: readonly Entry[]): string {
  const { current, generations } = orderSessions(sessions);
  const several = generations.length > 1;
  const extra = several
    ? {
        generations: generations.map((s) => ({
          session_id: s.id,
          generation: s.generation,
          created_at: new Date(s.createdAt).toISOString(),
          ...(s.archivedAt !== undefined ? { archived_at: new Date(s.archivedAt).toISOString() } : {}),
        })),
      }
    : {};
  const out = [encodeLine(metadataLine(current, extra))];
  for (const entry of entries) out.push(...entryLines(entry, entries, several));
  return out.join("");
}
