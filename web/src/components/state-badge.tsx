export type RowState = "active" | "archived" | "running" | "deleted";

const LABELS: Record<RowState, string> = {
  active: "Idle",
  archived: "Archived",
  running: "Running",
  deleted: "Deleted",
};

/** The session's state, and a needs-attention badge when the gateway flags it. */
export function StateBadge({ state, needsAttention }: { state: RowState; needsAttention: boolean }) {
  return (
    <span class="state">
      <span class={`badge badge-${state}`}>{LABELS[state]}</span>
      {needsAttention && (
        <span class="badge badge-attention" title="This session needs attention">
          Needs attention
        </span>
      )}
    </span>
  );
}
