import type { RuntimeEvent, RuntimeRun, RuntimeToolResult, RuntimeTools } from "../model/runtime.js";
import { tracedTool } from "../tracing/spans.js";

/** A tool call of the model's, with the id its result must carry. */
export interface RoundCall {
  id: string;
  name: string;
  /** As the model streamed it: JSON text, or an object (Anthropic). */
  arguments: unknown;
}

/** What goes back to the model after a round: one result per call, in call order, then the steering messages. */
export interface RoundOutcome {
  results: Array<{ id: string; content: string; failed: boolean }>;
  steers: string[];
}

/** The paired result of a call a steering message made the turn skip. */
export const SKIPPED_BY_STEER = JSON.stringify({
  error: "not run: the user sent a new message before this tool call ran",
});

/**
 * Runs one round of tool calls, yielding a `tool_call` event per call. A steering message waiting before
 * a call (queue mode `steer`) skips that call and the rest of the round: each gets a failed result, so
 * every call keeps its pair, and the messages are taken (stored) to follow the results.
 */
export async function* toolRound(
  tools: RuntimeTools,
  calls: readonly RoundCall[],
  run: Pick<RuntimeRun, "signal" | "steering">,
): AsyncGenerator<RuntimeEvent, RoundOutcome, undefined> {
  const results: RoundOutcome["results"] = [];
  const steering = run.steering;
  let steered = false;
  for (const call of calls) {
    steered ||= steering?.pending() ?? false;
    const outcome: RuntimeToolResult = steered
      ? { content: SKIPPED_BY_STEER, failed: true }
      : await tracedTool(call, () => executeTool(tools, call, run.signal));
    yield {
      type: "tool_call",
      id: call.id,
      name: call.name,
      arguments: call.arguments,
      ...(outcome.failed ? { failed: true } : {}),
    };
    results.push({ id: call.id, content: outcome.content, failed: outcome.failed === true });
  }
  const steers = steering && (steered || steering.pending()) ? await steering.take() : [];
  return { results, steers };
}

/** A tool executor that throws gives a failed result: the model hears of the failure, the turn goes on. */
async function executeTool(
  tools: RuntimeTools,
  call: RoundCall,
  signal: AbortSignal,
): Promise<RuntimeToolResult> {
  const args = typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments);
  try {
    return await tools.execute({ id: call.id, name: call.name, arguments: args }, signal);
  } catch (error) {
    if (signal.aborted) throw error;
    const message = error instanceof Error ? error.message : String(error);
    return { content: JSON.stringify({ error: message }), failed: true };
  }
}
