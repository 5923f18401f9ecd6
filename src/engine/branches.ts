import { MAX_KEY_BYTES } from "../keys/validate.js";
import { newId } from "../model/ids.js";
import type { Session } from "../model/session.js";
import { sessionNotFound } from "../store/session-log.js";
import type { Store } from "../store/store.js";
import type { SessionBranch } from "./api.js";

/**
 * A fork's key when the caller names none: a web chat key, so the dashboard's chat (and `POST /api/chat`)
 * can go on in it. A web chat's fork is named after it; another conversation's (a Telegram DM's, say) is
 * `admin-fork-<id>`: its origin is in its `forkedFrom`, and a platform never routes to it.
 */
export function forkKeyOf(key: string): string {
  const suffix = newId().slice(-10).toLowerCase();
  const derived = `${key}/fork-${suffix}`;
  return key.startsWith("admin-") && Buffer.byteLength(derived, "utf8") <= MAX_KEY_BYTES
    ? derived
    : `admin-fork-${suffix}`;
}

/** How far back a running turn's entries are looked for: its input, notes and steers. */
const RUNNING_TURN_WINDOW = 500;

/**
 * The newest entry of a conversation whose turn is running that a fork can take: the last assistant reply
 * before the running turn's entries (its input, its steers), or the entry before its input when no reply
 * is in sight.
 */
export async function lastCompletedSeq(store: Store, session: Session): Promise<number> {
  const newest = await store.readEntries(session.id, { order: "desc", limit: RUNNING_TURN_WINDOW });
  let lastUser: number | undefined;
  for (const entry of newest) {
    if (entry.type !== "message") continue;
    if (entry.role === "assistant") return entry.seq;
    if (entry.role === "user") lastUser = entry.seq;
  }
  return lastUser === undefined ? session.entryCount : lastUser - 1;
}

/** A key's sessions (newest first) and the forks taken from any of them. */
export async function branchesOf(store: Store, key: string): Promise<SessionBranch[]> {
  const generations = await store.generations(key);
  if (generations.length === 0) throw sessionNotFound(key);
  const rewoundFrom = new Set<string>();
  for (const session of generations) {
    const origin = session.forkedFrom;
    if (origin && generations.some((g) => g.id === origin.sessionId)) rewoundFrom.add(origin.sessionId);
  }
  const branches: SessionBranch[] = generations.map((session) => ({
    key,
    session,
    kind: session.state === "active" ? "current" : rewoundFrom.has(session.id) ? "rewound" : "archived",
  }));
  const forks = await store.forksOf(generations.map((s) => s.id));
  for (const session of forks) {
    if (session.key !== key) branches.push({ key: session.key, session, kind: "fork" });
  }
  return branches;
}
