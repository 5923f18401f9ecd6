export type RowState = "active" | "archived" | "running" | "deleted";

const LABELS: Record<RowState, string> = {
  active: "Idle",
  archived: "Archived",
  running: "Running",
  deleted: "Deleted",
};

/** The session's state, and needs-attention and incognito badges when the gateway flags them. */
export function StateBadge({
  state,
  needsAttention,
  incognito = false,
}: {
  state: RowState;
  needsAttention: boolean;
  incognito?: boolean;
}) {
  return (
    <span class="state">
      <span class={`badge badge-${state}`}>{LABELS[state]}</span>
      {incognito && (
        <span
          class="badge badge-incognito"
          title="Incognito: kept in the gateway's memory only, never exported or shared, gone at its restart"
        >
          Incognito
        </span>
      )}
      {needsAttention && (
        <span class="badge badge-attention" title="This session needs attention">
          Needs attention
        </span>
      )}
    </span>
  );
}
