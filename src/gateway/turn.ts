import type { Envelope } from "../model/envelope.js";
import type { RuntimeEvent } from "../model/runtime.js";
import type { TurnResult } from "../turns/turn.js";
import type { RouteDeps } from "./types.js";

export interface RunTurnOptions {
  /** Every text delta as the runtime streams it. */
  onText?: (delta: string) => void | Promise<void>;
  /** Keep the session in memory only (`TurnOptions.incognito`). */
  incognito?: boolean;
}

/** Runs one turn on the routed agent's runtime; cancelled only when shutdown's grace period runs out. */
export function runTurn(
  deps: RouteDeps,
  envelope: Envelope,
  options: RunTurnOptions = {},
): Promise<TurnResult> {
  const { onText, incognito } = options;
  const onEvent = onText
    ? async (event: RuntimeEvent) => {
        if (event.type === "text" && event.delta) await onText(event.delta);
      }
    : undefined;
  return deps.engine.turn(envelope, {
    signal: deps.shutdownSignal,
    ...(onEvent ? { onEvent } : {}),
    ...(incognito ? { incognito } : {}),
  });
}

/**
 * The JSON answer of a turn, shared by the chat, webhook, App API and chat-hook endpoints. `session_id` is
 * the key, as `/api/chat` takes it; which generation of it answered is said apart (`generation`, and its
 * internal id `generation_id`).
 */
export async function turnReply(deps: RouteDeps, result: TurnResult) {
  const generation = result.generation ?? (await currentGeneration(deps, result));
  return {
    key: result.key,
    session_id: result.key,
    ...(generation !== undefined ? { generation } : {}),
    generation_id: result.sessionId,
    reply: result.reply?.content ?? null,
    ...(result.notice ? { notice: result.notice } : {}),
    ...(result.reset ? { reset: result.reset } : {}),
    ...(result.compaction ? { compacted: true } : {}),
    deduplicated: result.deduplicated,
  };
}

/** The key's generation when its current session is the one that answered. */
async function currentGeneration(deps: RouteDeps, result: TurnResult): Promise<number | undefined> {
  const session = await deps.engine.sessions.get(result.key);
  return session?.id === result.sessionId ? session.generation : undefined;
}
