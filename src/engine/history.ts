import type { Entry } from "../model/entry.js";
import type { Session } from "../model/session.js";
import { sessionNotFound } from "../store/session-log.js";
import type { Store } from "../store/store.js";
import type { HistoryOptions } from "./api.js";

/**
 * A key's entries, oldest first: the newest `limit` of the current session (before `before`), and with
 * `includeArchived` those of the generations before it, read newest generation first until the limit
 * (`beforeSession`: starting in that generation, for the next page back).
 */
export async function readHistory(store: Store, key: string, options: HistoryOptions): Promise<Entry[]> {
  const { limit, before, includeArchived, beforeSession } = options;
  let generations = includeArchived
    ? await store.generations(key)
    : [await store.getSession(key)].filter((s): s is Session => s !== undefined);
  if (generations.length === 0) throw sessionNotFound(key);
  if (includeArchived && beforeSession !== undefined) {
    // Newest generation first: the page starts in the named one and goes on into older ones.
    const from = generations.findIndex((s) => s.id === beforeSession);
    if (from === -1) return [];
    generations = generations.slice(from);
  }
  const pages: Entry[][] = [];
  let remaining = limit ?? Number.POSITIVE_INFINITY;
  for (const [i, session] of generations.entries()) {
    if (remaining <= 0) break;
    const range = {
      order: "desc" as const,
      ...(i === 0 && before !== undefined ? { beforeSeq: before } : {}),
      ...(Number.isFinite(remaining) ? { limit: remaining } : {}),
    };
    const page = await store.readEntries(session.id, range);
    remaining -= page.length;
    pages.push(page.reverse());
  }
  return pages.reverse().flat();
}
