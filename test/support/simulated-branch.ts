import type { Engine } from "../../src/engine.js";
import { type EntryInput, entryBody } from "../../src/model/entry.js";
import type { ForkOrigin } from "../../src/model/session.js";
import type { BranchOutcome } from "../../src/runtimes/sessions/branch.js";

/**
 * What the store's fork and rewind leave for the runtime sessions to follow, made with the store's own
 * operations until engine.fork/rewind exist: the branch's session holds the parent's entries 1..seq at the
 * same seqs (copies here, references in the store), then `engine.agents.branch` runs as the engine will
 * run it after the store's commit.
 */
async function copyInto(engine: Engine, key: string, from: ForkOrigin): Promise<string> {
  const entries = await engine.store.readEntries(from.sessionId, { beforeSeq: from.seq + 1 });
  const inputs = entries.map((e) => ({ ...entryBody(e), ts: e.ts }) as EntryInput);
  if (inputs.length === 0) {
    const current = await engine.store.getSession(key);
    if (!current) throw new Error(`no session at ${key}`);
    return current.id;
  }
  const appended = await engine.append(key, inputs);
  if (appended.session.entryCount !== from.seq) throw new Error("the copy does not end at the fork's seq");
  return appended.session.id;
}

/** A fork of `fromKey`'s current session after entry `seq`, to `toKey` (a key with no session yet). */
export async function forkAt(
  engine: Engine,
  fromKey: string,
  seq: number,
  toKey: string,
): Promise<{ from: ForkOrigin; outcome: BranchOutcome }> {
  const parent = await engine.store.getSession(fromKey);
  if (!parent) throw new Error(`no session at ${fromKey}`);
  const from = { key: fromKey, sessionId: parent.id, seq };
  const id = await copyInto(engine, toKey, from);
  const outcome = await engine.agents.branch({ kind: "fork", from, to: { key: toKey, id } }, engine.store);
  return { from, outcome };
}

/** A rewind of `key`: its conversation continues from the entries before `toSeq`. */
export async function rewindTo(
  engine: Engine,
  key: string,
  toSeq: number,
): Promise<{ from: ForkOrigin; outcome: BranchOutcome }> {
  const { archived } = await engine.store.reset(key, "rewind");
  const from = { key, sessionId: archived.id, seq: toSeq - 1 };
  const id = await copyInto(engine, key, from);
  const outcome = await engine.agents.branch({ kind: "rewind", from, to: { key, id } }, engine.store);
  return { from, outcome };
}
