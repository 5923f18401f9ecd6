import type { Engine } from "../engine.js";
import type { Entry } from "../model/entry.js";
import type { Session } from "../model/session.js";
import { sessionNotFound } from "../store/session-log.js";

export interface KeyHistory {
  /** The key's current session (the newest generation). */
  current: Session;
  /** The generations read, oldest first: only the current one unless archived ones were asked for. */
  sessions: Session[];
  entries: Entry[];
}

/** A key's sessions and entries, as show and export need them; SESSION_NOT_FOUND when it has none. */
export async function readHistory(
  engine: Engine,
  key: string,
  options: { all?: boolean; limit?: number },
): Promise<KeyHistory> {
  const generations = await engine.sessions.generations(key);
  const current = generations.find((s) => s.state === "active") ?? generations[0];
  if (!current) throw sessionNotFound(key);
  const entries = await engine.history(key, {
    ...(options.all ? { includeArchived: true } : {}),
    ...(options.limit !== undefined ? { limit: options.limit } : {}),
  });
  const sessions = options.all ? [...generations].sort((a, b) => a.generation - b.generation) : [current];
  return { current, sessions, entries };
}
