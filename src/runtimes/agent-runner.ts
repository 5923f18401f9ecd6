import type { ModelChoice } from "../config/effective-model.js";
import type { Runtime, RuntimeEvent, RuntimeRun, RuntimeTools } from "../model/runtime.js";
import type { TurnContext, TurnRunner } from "../turns/turn.js";
import { sessionRunner } from "./sessions/runner.js";
import type { RuntimeSessionStore } from "./sessions/store.js";

export interface AgentRunnerDeps {
  /** The runtime that answers for an agent; `session` is a session's own `model` / `provider` overrides. */
  runtimeFor(agent: string, session: ModelChoice): Runtime;
  /** The run's permission mode: the agent's, or `auto` during a work session in this conversation. */
  permissionFor(agent: string, key: string): RuntimeRun["permission"];
  /** Where runtime sessions, costs and needs-attention marks are kept. */
  store: RuntimeSessionStore;
  /** Every agent's id, for the new-activity prompt. */
  agents: readonly string[];
  /** Resolves once agent settings changed through another process are read (before the runtime is chosen). */
  settled(): Promise<void> | undefined;
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
  return async (context) => {
    const settling = deps.settled();
    if (settling) await settling;
    const { model, provider } = context.session.overrides;
    const runtime = deps.runtimeFor(context.agent, { model, provider });
    const permission = deps.permissionFor(context.agent, context.key);
    // `keeps` carried over: an echo run offered tools still has no cost to record.
    const offered: Runtime =
      tools || permission !== undefined
        ? {
            kind: runtime.kind,
            ...(runtime.keeps ? { keeps: runtime.keeps } : {}),
            run: (run) =>
              runtime.run({
                ...run,
                ...(tools ? { tools } : {}),
                ...(permission !== undefined ? { permission } : {}),
              }),
          }
        : runtime;
    return sessionRunner(offered, deps.store, runnerOptions)(context);
  };
}
