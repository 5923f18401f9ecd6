import type { Agents } from "../types";

/** A labelled choice of agent; `""` is the first option (all agents, or the default one). */
export function AgentSelect({
  id,
  agents,
  value,
  emptyLabel,
  onChange,
}: {
  id: string;
  agents: Agents | undefined;
  value: string;
  emptyLabel: string;
  onChange: (agent: string) => void;
}) {
  return (
    <div class="field">
      <label for={id}>Agent</label>
      <select id={id} value={value} onChange={(e) => onChange(e.currentTarget.value)}>
        <option value="">{emptyLabel}</option>
        {(agents?.agents ?? []).map(({ name }) => (
          <option key={name} value={name}>
            {name}
          </option>
        ))}
      </select>
    </div>
  );
}
