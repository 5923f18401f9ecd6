import type { Envelope } from "../model/envelope.js";
import type { Runtime, RuntimeEvent, RuntimeRun } from "../model/runtime.js";
import { sessionRunner } from "../runtimes/sessions/runner.js";
import type { TurnContext, TurnResult, TurnRunner } from "../turns/turn.js";
import type { GatewayDeps } from "./deps.js";
import type { RouteDeps } from "./types.js";

export interface RunTurnOptions {
  /** Every text delta as the runtime streams it. */
  onText?: (delta: string) => void | Promise<void>;
}

/** Runs one turn on the routed agent's runtime; cancelled only when shutdown's grace period runs out. */
export function runTurn(
  deps: RouteDeps,
  envelope: Envelope,
  options: RunTurnOptions = {},
): Promise<TurnResult> {
  const onEvent = options.onText
    ? async (event: RuntimeEvent) => {
        if (event.type === "text" && event.delta) await options.onText?.(event.delta);
      }
    : undefined;
  return deps.engine.turn(envelope, (context) => agentRunner(deps, context.agent, onEvent)(context), {
    signal: deps.shutdownSignal,
  });
}

/**
 * The JSON answer of a turn, shared by the chat, webhook, App API and chat-hook endpoints. `session_id` is
 * the key, as `/api/chat` takes it; which generation of it answered is said apart (`generation`, and its
 * internal id `generation_id`).
 */
export async function turnReply(deps: RouteDeps, result: TurnResult) {
  const session = await deps.engine.sessions.get(result.key);
  return {
    key: result.key,
    session_id: result.key,
    ...(session?.id === result.sessionId ? { generation: session.generation } : {}),
    generation_id: result.sessionId,
    reply: result.reply?.content ?? null,
    ...(result.notice ? { notice: result.notice } : {}),
    ...(result.reset ? { reset: result.reset } : {}),
    ...(result.compaction ? { compacted: true } : {}),
    deduplicated: result.deduplicated,
  };
}

/** The runner of an agent's runtime, with its runtime session resumed, saved, priced and marked on failure. */
export function agentRunner(
  deps: GatewayDeps,
  agent: string,
  onEvent?: (event: RuntimeEvent, context: TurnContext) => void | Promise<void>,
): TurnRunner {
  const options = { agents: deps.engine.routing.agents, ...(onEvent ? { onEvent } : {}) };
  return (context) => {
    const { model, provider } = context.session.overrides;
    const runtime = withPermission(
      deps.runtimeFor(agent, { model, provider }),
      deps.engine.agents.permissionFor(agent, context.key),
    );
    return sessionRunner(runtime, deps.engine.agents.store, options)(context);
  };
}

/** The run's permission mode: the agent's, or `auto` during a work session in this conversation. */
function withPermission(runtime: Runtime, permission: RuntimeRun["permission"]): Runtime {
  if (permission === undefined) return runtime;
  return { kind: runtime.kind, run: (run) => runtime.run({ ...run, permission }) };
}
