import type { ModelChoice } from "../config/effective-model.js";
import type { CostLedger } from "../ledger/entry.js";
import type { Runtime, RuntimeEvent, RuntimeRun, RuntimeTools } from "../model/runtime.js";
import type { TurnContext, TurnReply, TurnRunner } from "../turns/turn.js";
import { runKeepingSession } from "./sessions/runner.js";
import type { RuntimeSessionStore } from "./sessions/store.js";

export interface AgentLoopDeps {
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
  /** Where each model call is recorded (src/ledger). */
  ledger?: CostLedger;
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

/**
 * The agents' turn loop, built once: each run picks the turn's agent's runtime (with the session's model
 * overrides), its permission mode and tools, resumes and saves its runtime session, prices it and marks the
 * agent on failure (`runKeepingSession`), streaming every event to the caller.
 */
export class AgentLoop {
  constructor(private readonly deps: AgentLoopDeps) {}

  /** A turn's runner on its agent's runtime, with the tools and event stream of the turn's entry point. */
  runner(options: AgentRunOptions = {}): TurnRunner {
    return (context) => this.run(context, options);
  }

  run(context: TurnContext, options: AgentRunOptions): Promise<TurnReply> {
    const settling = this.deps.settled();
    return settling ? settling.then(() => this.start(context, options)) : this.start(context, options);
  }

  private start(context: TurnContext, options: AgentRunOptions): Promise<TurnReply> {
    const { deps } = this;
    const { model, provider } = context.session.overrides;
    const runtime = deps.runtimeFor(context.agent, { model, provider });
    const permission = deps.permissionFor(context.agent, context.key);
    return runKeepingSession(
      runtime,
      deps.store,
      {
        agents: deps.agents,
        ...(options.onEvent ? { onEvent: options.onEvent } : {}),
        ...(options.tools ? { tools: options.tools } : {}),
        ...(permission !== undefined ? { permission } : {}),
        ...(deps.ledger ? { ledger: deps.ledger } : {}),
      },
      context,
    );
  }
}
