import type { RuntimeBranch } from "./branch.js";

/** LoCrew's words for runtime sessions cleared. */
export function clearedNotice(count: number): string {
  return `${count} saved ${count === 1 ? "session" : "sessions"} cleared, so the next run starts fresh.`;
}

/** LoCrew's words, exactly, for an agent whose working directory changed. */
export function movedNotice(count: number): string {
  return `Agent moved: New working directory. ${clearedNotice(count)}`;
}

/** `Forked from <key> at entry N: dev (codex): …. 1 saved session cleared, so the next run starts fresh.` */
export function branchNotice(branch: RuntimeBranch, reasons: readonly string[]): string {
  const where =
    branch.kind === "fork"
      ? `Forked from ${branch.from.key} at entry ${branch.from.seq}`
      : `Rewound to before entry ${branch.from.seq + 1}`;
  return `${where}: ${reasons.join("; ")}. ${clearedNotice(reasons.length)}`;
}
