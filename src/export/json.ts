import type { Entry } from "../model/entry.js";
import type { Session } from "../model/session.js";
import { type ExportOptions, includeGenerations, orderSessions } from "./sessions.js";

/** `{ session, generations?, entries }`: the stored objects unchanged, generations oldest first. */
export function exportJson(
  sessions: readonly Session[],
  entries: readonly Entry[],
  options: ExportOptions = {},
): string {
  const { current, generations } = orderSessions(sessions);
  const document = {
    session: current,
    ...(includeGenerations(sessions, options) ? { generations } : {}),
    entries,
  };
  return `${JSON.stringify(document, null, 2)}\n`;
}
