import type { RoutingConfig } from "../keys/types.js";
import { isSessiondError } from "../model/errors.js";
import type { SessionInit } from "../model/session.js";
import { routeSession } from "./route-origin.js";
import type { ImportProblem, SourceSession } from "./types.js";

export type Routed = SourceSession & { key: string; init: SessionInit; assumed: string[] };

/** One sentence on what a session's key rests on that the peer's data does not say. */
export interface ImportAssumption {
  file: string;
  key: string;
  assumed: string;
}

/**
 * Every source session's key, grouped by key in read order. Two current sessions of one key would merge
 * into one history: where they differ by account, each gets its account's key (as `dm_scope:
 * per-channel-account-peer` gives it); otherwise the earlier ones become archived generations before the
 * latest, and the report says so.
 */
export function planKeys(
  sessions: readonly SourceSession[],
  routing: RoutingConfig,
  problems: ImportProblem[],
): Map<string, Routed[]> {
  const routed: Routed[] = [];
  for (const session of sessions) {
    try {
      routed.push({ ...session, ...routeSession(session, routing) });
    } catch (error) {
      if (!isSessiondError(error)) throw error;
      problems.push({ file: session.file, reason: `${session.key}: ${error.message}` });
    }
  }
  const accountScoped: RoutingConfig = { ...routing, dmScope: "per-channel-account-peer" };
  for (const group of groupByKey(routed).values()) {
    const current = group.filter((r) => !r.archived);
    const accounts = new Set(current.map((r) => r.origin?.account ?? ""));
    if (current.length < 2 || accounts.size < 2) continue;
    for (const r of group) {
      if (r.origin?.account === undefined) continue;
      const again = routeSession(r, accountScoped);
      const note = `two accounts' chats with one person share ${r.key} under dm_scope ${routing.dmScope}; kept apart as ${again.key}, where new messages go with dm_scope: per-channel-account-peer`;
      Object.assign(r, { key: again.key, init: again.init, assumed: [...r.assumed, note] });
    }
  }
  const byKey = groupByKey(routed);
  for (const [key, group] of byKey) {
    const current = group.filter((r) => !r.archived);
    for (const r of current.slice(0, -1)) {
      r.archived = true;
      r.assumed.push(
        `${current.length} of the peer's current sessions land on ${key} under sessiond's routing; this one is kept as an earlier generation, the last one read continues`,
      );
    }
    // Archived generations first, the current one last, each in read order.
    byKey.set(key, [...group.filter((r) => r.archived), ...group.filter((r) => !r.archived)]);
  }
  return byKey;
}

function groupByKey(routed: Routed[]): Map<string, Routed[]> {
  const byKey = new Map<string, Routed[]>();
  for (const r of routed) byKey.set(r.key, [...(byKey.get(r.key) ?? []), r]);
  return byKey;
}
