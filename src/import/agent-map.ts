import { SessiondError } from "../model/errors.js";
import type { SourceRead } from "./types.js";

/** `work=main,ops=main` as `{work: "main", ops: "main"}`; INVALID_ARGUMENT on anything else. */
export function parseAgentMap(text: string): Record<string, string> {
  const map: Record<string, string> = {};
  for (const pair of text.split(",")) {
    const m = /^\s*([^=:,\s]+)\s*=\s*([^=:,\s]+)\s*$/.exec(pair);
    if (!m?.[1] || !m[2])
      throw new SessiondError(
        "INVALID_ARGUMENT",
        `--agent-map wants <peer agent>=<sessiond agent> pairs separated by commas (work=main,ops=main); got ${JSON.stringify(pair)}`,
      );
    map[m[1]] = m[2];
  }
  return map;
}

/**
 * Gives the sessions of each mapped agent to the agent it maps to. Readers key a non-default agent's
 * sessions with its id in front (`work:discord:…`), so that prefix is swapped too, or dropped when the
 * target is the default agent, as the readers do for the default agent's own sessions.
 */
export function mapAgents(
  read: SourceRead,
  map: Readonly<Record<string, string>>,
  defaultAgent: string,
): void {
  for (const session of read.sessions) {
    const from = session.init.agent;
    const to = map[from];
    if (to === undefined || to === from) continue;
    session.init = { ...session.init, agent: to };
    if (session.origin) session.origin = { ...session.origin, agent: to };
    if (session.key.startsWith(`${from}:`) && !session.ownKey)
      session.key = `${to === defaultAgent ? "" : `${to}:`}${session.key.slice(from.length + 1)}`;
  }
}

/** Every agent the sessions belong to that the routing does not list, with its count of sessions. */
export function unconfiguredAgents(
  agents: ReadonlyArray<{ agent: string }>,
  configured: readonly string[],
): Array<{ agent: string; sessions: number }> {
  const counts = new Map<string, number>();
  for (const { agent } of agents)
    if (!configured.includes(agent)) counts.set(agent, (counts.get(agent) ?? 0) + 1);
  return [...counts].sort(([a], [b]) => a.localeCompare(b)).map(([agent, sessions]) => ({ agent, sessions }));
}
