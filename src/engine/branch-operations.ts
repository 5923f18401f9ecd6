import { validateKey } from "../keys/index.js";
import type { AgentRuntimes } from "../runtimes/sessions/agent-runtimes.js";
import { sessionNotFound } from "../store/session-log.js";
import type { ForkResult, RewindResult, Store } from "../store/store.js";
import type { BranchedRuntimes, EngineForkOptions, EngineRewindOptions } from "./api.js";
import { forkKeyOf, lastCompletedSeq } from "./branches.js";

/** What the engine's fork and rewind work with. */
export interface BranchParts {
  store: Store;
  agents: AgentRuntimes;
  /** A turn runs on the key, here or in another gateway sharing the store. */
  turnRunsOn(key: string): Promise<boolean>;
  /** Runs `work` in the key's lane (after its running and queued turns). */
  inLane<T>(key: string, work: () => Promise<T>): Promise<T>;
}

/**
 * A fork of the key's current session, at its head (or, while a turn runs on it, at the last reply
 * before that turn's entries), with the runtime sessions that follow it.
 */
export async function forkIn(
  parts: BranchParts,
  key: string,
  options: EngineForkOptions,
): Promise<ForkResult & BranchedRuntimes> {
  validateKey(key);
  const toKey = options.toKey === undefined ? forkKeyOf(key) : validateKey(options.toKey);
  const source = await parts.store.getSession(key);
  if (!source) throw sessionNotFound(key);
  const atSeq =
    options.atSeq ??
    ((await parts.turnRunsOn(key)) ? await lastCompletedSeq(parts.store, source) : source.entryCount);
  const forked = await parts.store.fork(key, { sessionId: source.id, atSeq, toKey });
  // After the store's commit: a failure here leaves the fork, and calling branch again is safe.
  const runtimeSessions = await parts.agents.branch(
    { kind: "fork", from: forked.forkedFrom, to: forked.session },
    parts.store,
  );
  return { ...forked, runtimeSessions };
}

/** A rewind of the key, in its lane, with the runtime sessions that follow it. */
export function rewindIn(
  parts: BranchParts,
  key: string,
  options: EngineRewindOptions,
): Promise<RewindResult & BranchedRuntimes> {
  validateKey(key);
  return parts.inLane(key, async () => {
    const rewound = await parts.store.rewind(key, options);
    const runtimeSessions = await parts.agents.branch(
      { kind: "rewind", from: rewound.forkedFrom, to: rewound.current },
      parts.store,
    );
    return { ...rewound, runtimeSessions };
  });
}
