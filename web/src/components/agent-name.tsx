import type { Agents } from "../types";

/** What an unconfigured agent's session can and cannot do, for the mark's tooltip and the details. */
export const UNCONFIGURED_HINT =
  "This agent is not in sessiond's configuration: its sessions can be read, searched and exported, but run no turn. Add it to agents, or import again with --agent-map.";

/** Whether the gateway has the agent (undefined while the agents are still loading). */
export function isConfigured(agents: Agents | undefined, agent: string): boolean | undefined {
  return agents ? agents.agents.some((a) => a.name === agent) : undefined;
}

/** An agent's name, marked when sessiond has no such agent (an imported session of another gateway's). */
export function AgentName({ agent, agents }: { agent: string; agents: Agents | undefined }) {
  return (
    <>
      {agent}
      {isConfigured(agents, agent) === false && (
        <span class="badge badge-unconfigured" title={UNCONFIGURED_HINT} data-testid="agent-unconfigured">
          unconfigured
        </span>
      )}
    </>
  );
}
