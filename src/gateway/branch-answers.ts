import type { BranchedRuntimes, SessionBranch } from "../engine/api.js";
import type { ForkOrigin, Session } from "../model/session.js";
import type { ForkResult, RewindResult } from "../store/store.js";

/*
 * The answers of fork, rewind and branches, one shape for REST, WebSocket and `sessiond sessions … --json`.
 * Sessions are sent as everywhere else (camelCase, `forkedFrom` included); the lineage beside them is
 * snake_case like the request fields (`at_seq`, `to_key`), as the issue and the documents name it.
 */

/** Where a session's history came from: the first `seq` entries of session `session_id` of `key`. */
export interface OriginAnswer {
  key: string;
  session_id: string;
  seq: number;
}

/** The agents whose runtime sessions follow the branch, and those whose were cleared (a note says why). */
export interface RuntimeSessionsAnswer {
  followed: string[];
  cleared: string[];
}

export interface ForkAnswer {
  /** The new key. */
  key: string;
  session: Session;
  forked_from: OriginAnswer;
  runtime_sessions: RuntimeSessionsAnswer;
}

export interface RewindAnswer {
  /** The key's conversation now: the entries before `to_seq`, then its own. */
  session: Session;
  /** The session rewound: archived, readable as a branch. */
  archived: Session;
  forked_from: OriginAnswer;
  runtime_sessions: RuntimeSessionsAnswer;
}

export interface BranchAnswer {
  kind: SessionBranch["kind"];
  key: string;
  session: Session;
}

export interface BranchesAnswer {
  key: string;
  branches: BranchAnswer[];
}

export function originAnswer(origin: ForkOrigin): OriginAnswer {
  return { key: origin.key, session_id: origin.sessionId, seq: origin.seq };
}

function runtimeSessionsAnswer({ runtimeSessions }: BranchedRuntimes): RuntimeSessionsAnswer {
  return { followed: [...runtimeSessions.followed], cleared: [...runtimeSessions.cleared] };
}

export function forkAnswer(result: ForkResult & BranchedRuntimes): ForkAnswer {
  return {
    key: result.session.key,
    session: result.session,
    forked_from: originAnswer(result.forkedFrom),
    runtime_sessions: runtimeSessionsAnswer(result),
  };
}

export function rewindAnswer(result: RewindResult & BranchedRuntimes): RewindAnswer {
  return {
    session: result.current,
    archived: result.archived,
    forked_from: originAnswer(result.forkedFrom),
    runtime_sessions: runtimeSessionsAnswer(result),
  };
}

export function branchesAnswer(key: string, branches: readonly SessionBranch[]): BranchesAnswer {
  return { key, branches: branches.map((b) => ({ kind: b.kind, key: b.key, session: b.session })) };
}
