import type { Session } from "../model/session.js";
import type { SearchResult } from "./query.js";

/** What `withForks` needs of a store: the sessions forked from given ones. */
export interface ForkLookup {
  forksOf?(sessionIds: readonly string[]): Promise<Session[]>;
}

/** How deep forks of forks are followed, and how many sessions at most, per search. */
const MAX_DEPTH = 8;
const MAX_SESSIONS = 1_000;

/**
 * A message is indexed once, in the session that stores it; forks (and rewound generations) whose history
 * includes it inherit it. Each hit names them (`inheritedBy`), so a search finds a fork's inherited prefix.
 */
export async function withForks(store: ForkLookup, result: SearchResult): Promise<SearchResult> {
  if (!store.forksOf || result.hits.length === 0) return result;
  const children = new Map<string, Session[]>();
  let frontier = [...new Set(result.hits.map((hit) => hit.sessionId))];
  let seen = 0;
  for (let depth = 0; depth < MAX_DEPTH && frontier.length > 0 && seen < MAX_SESSIONS; depth++) {
    const forks = await store.forksOf(frontier);
    seen += forks.length;
    for (const fork of forks) {
      const parent = fork.forkedFrom!.sessionId;
      children.set(parent, [...(children.get(parent) ?? []), fork]);
    }
    frontier = forks.map((fork) => fork.id);
  }
  if (children.size === 0) return result;
  const heirs = (sessionId: string, seq: number, into: Array<{ key: string; sessionId: string }>) => {
    for (const fork of children.get(sessionId) ?? []) {
      if (fork.forkedFrom!.seq < seq) continue;
      into.push({ key: fork.key, sessionId: fork.id });
      heirs(fork.id, seq, into);
    }
    return into;
  };
  return {
    ...result,
    hits: result.hits.map((hit) => {
      const inheritedBy = heirs(hit.sessionId, hit.seq, []);
      return inheritedBy.length === 0 ? hit : { ...hit, inheritedBy };
    }),
  };
}
