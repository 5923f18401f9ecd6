import type { ForkOrigin, Session } from "../../model/session.js";
import { branchNotice } from "./notices.js";
import type { RuntimeSessionRecord, RuntimeSessionStore } from "./store.js";
import { dataWith, marksOf, marksUpTo, type ReplyReader, runtimeDataOf } from "./turn-marks.js";

/** A fork or rewind the store has committed, as the runtime sessions follow it. */
export interface RuntimeBranch {
  kind: "fork" | "rewind";
  /** The session branched and the last entry kept: the store result's `forkedFrom`. */
  from: ForkOrigin;
  /** The session that continues from there: the fork (another key), or the key's own after a rewind. */
  to: Pick<Session, "key" | "id">;
}

/** Agents by name: whose runtime session continues on the branch, and whose starts fresh there. */
export interface BranchOutcome {
  followed: string[];
  cleared: string[];
}

/** Runtimes whose session a run can branch at a checkpoint it reported (`RuntimeRun.resumeAt`). */
const BRANCHABLE: ReadonlySet<string> = new Set(["claude-code"]);

/** Why a runtime session could not follow, in the note (LoCrew's clearing words come after). */
const CANNOT: Record<string, string> = {
  codex: "its Codex SDK has no thread fork",
  a2a: "an A2A context cannot be forked",
};

/**
 * Each runtime session of the branched key follows the branch where its runtime can branch from the point
 * (Claude Code: `forkSession` at the checkpoint of the last turn answered at or before it, made by the next
 * run on `to`); the others are cleared on `to` — a fork's key never gets them, a rewound key loses them —
 * with one note there saying whose and why. Following the same branch again changes nothing.
 */
export async function followBranch(
  store: RuntimeSessionStore,
  note: (key: string, text: string) => Promise<void>,
  branch: RuntimeBranch,
  history: ReplyReader,
  now: () => number = Date.now,
): Promise<BranchOutcome> {
  const outcome: BranchOutcome = { followed: [], cleared: [] };
  const reasons: string[] = [];
  for (const record of await store.forKey(branch.from.key)) {
    const marks = BRANCHABLE.has(record.runtime) ? marksOf(record.data) : [];
    const kept = await marksUpTo(marks, branch.from, branch.to.id, history);
    const at = kept.at(-1)?.at;
    if (at !== undefined) {
      await store.save({
        agent: record.agent,
        key: branch.to.key,
        runtime: record.runtime,
        // The next run resumes this session at `at` as a new one: the session itself is left as it is.
        id: record.id,
        data: dataWith(runtimeDataOf(record.data), kept, at) as Record<string, string>,
        savedAt: now(),
      });
      outcome.followed.push(record.agent);
      continue;
    }
    await store.clear(record.agent, branch.to.key);
    outcome.cleared.push(record.agent);
    reasons.push(`${record.agent} (${record.runtime}): ${reasonFor(record)}`);
  }
  if (reasons.length > 0) await note(branch.to.key, branchNotice(branch, reasons));
  return outcome;
}

function reasonFor(record: RuntimeSessionRecord): string {
  return (
    CANNOT[record.runtime] ??
    (BRANCHABLE.has(record.runtime)
      ? "no turn of its session ends within the entries kept"
      : "its runtime cannot fork a session")
  );
}
