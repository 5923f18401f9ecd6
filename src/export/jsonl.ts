import type { Entry } from "../model/entry.js";
import type { Session } from "../model/session.js";
import { entryLines, metadataLine } from "../store/jsonl/crabtalk-format.js";
import { fileFamily, sessionFileName } from "../store/jsonl/file-names.js";
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
  // An export holds every entry of its history, the inherited ones too: it names its origin without the
  // store's `forked_from`, which would have the file read through a session the reader may not have.
  const { forkedFrom, ...whole } = current;
  const lineage = forkedFrom
    ? { copied_from: { key: forkedFrom.key, session_id: forkedFrom.sessionId, seq: forkedFrom.seq } }
    : {};
  const out = [encodeLine(metadataLine(whole, { ...lineage, ...extra }))];
  for (const entry of entries) out.push(...entryLines(entry, entries, several));
  return out.join("");
}

/** One file of a CrabTalk sessions directory: its name and its text. */
export interface JsonlFile {
  name: string;
  text: string;
}

/**
 * A key's generations as CrabTalk's sessions directory holds them: one file per generation, named as the
 * JSONL store names them (`{agent}_{sender}_{generation}[_{title_slug}].jsonl`), so that CrabTalk's
 * `find_latest_conversation` picks the current generation (the highest seq).
 */
export function exportJsonlFiles(sessions: readonly Session[], entries: readonly Entry[]): JsonlFile[] {
  return orderSessions(sessions).generations.map((session) => {
    const own = entries.filter((e) => e.sessionId === session.id);
    const { prefix } = fileFamily(session.agent, session.createdBy, session.key);
    return {
      name: sessionFileName(prefix, session.generation, session.title),
      text: exportJsonl([session], own),
    };
  });
}
