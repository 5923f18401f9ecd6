import type { Engine } from "../../src/engine.js";
import type { ForkOrigin } from "../../src/model/session.js";
import type { BranchOutcome } from "../../src/runtimes/sessions/branch.js";

/**
 * A fork of `fromKey`'s current session after entry `seq`, to `toKey` (a key with no session yet), through
 * `engine.fork`: the runtime sessions follow it as the engine has them do.
 */
export async function forkAt(
  engine: Engine,
  fromKey: string,
  seq: number,
  toKey: string,
): Promise<{ from: ForkOrigin; outcome: BranchOutcome }> {
  const forked = await engine.fork(fromKey, { atSeq: seq, toKey });
  return { from: forked.forkedFrom, outcome: forked.runtimeSessions };
}

/** A rewind of `key`: its conversation continues from the entries before `toSeq`. */
export async function rewindTo(
  engine: Engine,
  key: string,
  toSeq: number,
): Promise<{ from: ForkOrigin; outcome: BranchOutcome }> {
  const rewound = await engine.rewind(key, { toSeq });
  return { from: rewound.forkedFrom, outcome: rewound.runtimeSessions };
}
