import type { Runtime, RuntimeEvent, RuntimeTools } from "../model/runtime.js";
import type { TurnContext, TurnRunner } from "../turns/turn.js";
import { sessionRunner } from "./sessions/runner.js";
import type { RuntimeSessionStore } from "./sessions/store.js";

export interface AgentRunnerDeps {
  /** The runtime that answers for an agent; `model` is a session's own `model` override. */
  runtimeFor(agent: string, model?: string): Runtime;
  /** Where runtime sessions, costs and needs-attention marks are kept. */
  store: RuntimeSessionStore;
  /** Every agent's id, for the new-activity prompt. */
  agents: readonly string[];
}

export interface AgentRunOptions {
  /** Every runtime event, after it was recorded (streaming to clients). */
  onEvent?: (event: RuntimeEvent, context: TurnContext) => void | Promise<void>;
  /**
   * Tools the runtime gets in every run: with none offered (empty definitions), a tool call the model forges
   * anyway is refused (recorded as failed) instead of reported as made.
   */
  tools?: RuntimeTools;
}

/** The runner of the turn's agent: its runtime, with its runtime session resumed, saved, priced and marked on failure. */
export function agentRunner(deps: AgentRunnerDeps, options: AgentRunOptions = {}): TurnRunner {
  const { tools, onEvent } = options;
  const runnerOptions = { agents: deps.agents, ...(onEvent ? { onEvent } : {}) };
  return (context) => {
    const model = context.session.overrides.model;
    const runtime = deps.runtimeFor(context.agent, typeof model === "string" ? model : undefined);
    // `keeps` carried over: an echo run offered tools still has no cost to record.
    const offered: Runtime = tools
      ? {
          kind: runtime.kind,
          ...(runtime.keeps ? { keeps: runtime.keeps } : {}),
          run: (run) => runtime.run({ ...run, tools }),
        }
      : runtime;
    return sessionRunner(offered, deps.store, runnerOptions)(context);
  };
}
