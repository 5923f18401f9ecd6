import { useEffect, useState } from "preact/hooks";
import { getJson, sessionPath } from "../api";
import { count, relativeTime } from "../format";
import { entryHref, sessionHref } from "../router";
import type { Branch, Entry, RuntimeSessionsAnswer, Session } from "../types";

const KIND_LABELS: Record<Branch["kind"], string> = {
  current: "Current",
  rewound: "Rewound",
  archived: "Archived",
  fork: "Fork",
};

/**
 * Where a branch opens: a fork on its own page; an archived generation of this key at its last entry
 * before the reset line a rewind or reset ended it with.
 */
function branchHref(branch: Branch): string {
  if (branch.kind === "fork" || branch.kind === "current") return sessionHref(branch.key);
  return entryHref(branch.key, branch.session.id, Math.max(1, branch.session.entryCount - 1));
}

function branchName(branch: Branch): string {
  if (branch.kind === "fork") return branch.session.title || branch.key;
  if (branch.kind === "current") return `This conversation (generation ${branch.session.generation})`;
  return `Generation ${branch.session.generation}`;
}

/**
 * The key's conversation tree (`GET …/branches`): its current session, the ones a rewind or reset left,
 * and the forks taken from them, each a link. Shown once there is more than the current one; read again
 * when `refresh` changes.
 */
export function BranchesPanel({ sessionKey, refresh }: { sessionKey: string; refresh: unknown }) {
  const [branches, setBranches] = useState<Branch[]>([]);
  useEffect(() => {
    let stale = false;
    getJson<{ branches: Branch[] }>(sessionPath(sessionKey, "/branches"))
      .then((answer) => !stale && setBranches(answer.branches))
      // A gateway or store without branches: the page reads as before.
      .catch(() => !stale && setBranches([]));
    return () => {
      stale = true;
    };
  }, [sessionKey, refresh]);
  if (branches.length < 2) return null;
  return (
    <section class="card branches" aria-labelledby="branches-title">
      <h2 id="branches-title">Branches</h2>
      <ul class="plain branch-list">
        {branches.map((branch) => (
          <li key={`${branch.kind}-${branch.session.id}`} data-kind={branch.kind}>
            <span class={`badge badge-branch-${branch.kind}`}>{KIND_LABELS[branch.kind]}</span>{" "}
            <a class="break" href={branchHref(branch)}>
              {branchName(branch)}
            </a>
            <span class="muted">
              {" "}
              · {count(branch.session.entryCount)} {branch.session.entryCount === 1 ? "entry" : "entries"}
              {branch.session.forkedFrom ? ` (from #${branch.session.forkedFrom.seq})` : ""} · active{" "}
              {relativeTime(branch.session.lastActivityAt)}
            </span>
          </li>
        ))}
      </ul>
    </section>
  );
}

/** Where this session's history comes from: the session it was forked from, or rewound from, at which entry. */
export function Lineage({ session }: { session: Session }) {
  const origin = session.forkedFrom;
  if (!origin) return null;
  const href = entryHref(origin.key, origin.sessionId, origin.seq);
  return (
    <p class="lineage muted" data-testid="lineage">
      {origin.key === session.key ? (
        <>
          Rewound: continues from <a href={href}>#{origin.seq} of an earlier generation</a>
        </>
      ) : (
        <>
          Forked from{" "}
          <a class="break" href={href}>
            {origin.key}
          </a>{" "}
          at #{origin.seq}
        </>
      )}
    </p>
  );
}

/** "Fork from here" and "Rewind to here" on one entry of the conversation shown. */
export function EntryBranchActions({
  entry,
  disabled,
  onFork,
  onRewind,
}: {
  entry: Entry;
  disabled: boolean;
  onFork: (seq: number) => void;
  onRewind: (seq: number) => void;
}) {
  return (
    <span class="entry-actions">
      <button
        type="button"
        class="ghost"
        disabled={disabled}
        title={`A new session with the entries up to #${entry.seq}; this one stays as it is`}
        onClick={() => onFork(entry.seq)}
      >
        Fork from here
      </button>
      <button
        type="button"
        class="ghost"
        disabled={disabled}
        title={`Continue from before #${entry.seq}; #${entry.seq} and what follows stay readable as a branch`}
        onClick={() => onRewind(entry.seq)}
      >
        Rewind to here
      </button>
    </span>
  );
}

/** What a fork or rewind did to the agents' runtime sessions, for the status line ("" when nothing). */
export function runtimeSessionsNote(answer: RuntimeSessionsAnswer | undefined): string {
  const cleared = answer?.cleared ?? [];
  return cleared.length > 0
    ? ` The runtime sessions of ${cleared.join(", ")} could not follow and were cleared (a note says why).`
    : "";
}
