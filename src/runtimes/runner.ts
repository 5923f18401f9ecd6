import type { ReportedToolCall } from "../context/index.js";
import { isSessiondError, SessiondError } from "../model/errors.js";
import type { Runtime, RuntimeEvent, RuntimeRun, RuntimeTools } from "../model/runtime.js";
import type { TurnContext, TurnReply, TurnRunner } from "../turns/turn.js";
import { echoRuntime } from "./echo.js";
import { type ModelRuntimeConfig, modelRuntime } from "./model.js";

export interface RunnerOptions {
  /**
   * Every event as the runtime emits it, in order (the gateway streams text deltas to clients through
   * it). Awaited before the next event is read; a throw fails the turn. Tool-call arguments are raw here:
   * only the stored copy is stripped of credentials.
   */
  onEvent?: (event: RuntimeEvent, context: TurnContext) => void | Promise<void>;
  /** The stored runtime session to resume (Claude Code, Codex), for runtimes that keep one. */
  runtimeSessionId?: (context: TurnContext) => string | undefined;
  /** What was stored with that runtime session (A2A's waiting task id). */
  runtimeSessionData?: (context: TurnContext) => Record<string, string> | undefined;
  /** The checkpoint to branch that runtime session from, after a fork or rewind (see `RuntimeRun.resumeAt`). */
  resumeAt?: (context: TurnContext) => string | undefined;
  /** The prompt for runtimes that keep their own session (the new activity since their last run). */
  prompt?: (context: TurnContext) => string;
  /** Tools the runtime may offer the model this run (see `RuntimeRun.tools`). */
  tools?: RuntimeTools;
  /** The run's permission mode (see `RuntimeRun.permission`). */
  permission?: RuntimeRun["permission"];
}

/**
 * A TurnRunner that drives a runtime: the reply is the text deltas joined, with the tool calls, usage
 * (tokens summed over usage events, `cost.runUsd` as costUsd) and the runtime's own compaction it reported.
 * An abort of the turn's signal ends it as TURN_CANCELLED, whatever the runtime threw.
 */
export function runnerFor(runtime: Runtime, options: RunnerOptions = {}): TurnRunner {
  return (context) => driveRuntime(runtime, context, options);
}

/** One run of `runtime` for the turn of `context`, its events folded into the reply (see `runnerFor`). */
export async function driveRuntime(
  runtime: Runtime,
  context: TurnContext,
  options: RunnerOptions,
): Promise<TurnReply> {
  const run = runOf(context, options);
  let content = "";
  const toolCalls: ReportedToolCall[] = [];
  let usage: TurnReply["usage"];
  let runtimeCompaction: TurnReply["runtimeCompaction"];
  try {
    for await (const event of runtime.run(run)) {
      if (context.signal.aborted) break;
      context.progress?.saw(event);
      switch (event.type) {
        case "text":
          content += event.delta;
          break;
        case "tool_call":
          toolCalls.push({
            ...(event.id !== undefined ? { id: event.id } : {}),
            name: event.name,
            arguments: event.arguments,
            ...(event.failed ? { failed: true } : {}),
          });
          break;
        case "usage":
          usage = addUsage(usage, event);
          break;
        case "cost":
          if (event.runUsd !== undefined) usage = { ...usage, costUsd: (usage?.costUsd ?? 0) + event.runUsd };
          break;
        case "compacted":
          runtimeCompaction = { beforeTokens: event.beforeTokens, afterTokens: event.afterTokens };
          break;
        default:
          break;
      }
      const handled = options.onEvent?.(event, context);
      if (handled) await handled;
    }
  } catch (error) {
    if (context.signal.aborted) throw cancelled(context.key, error);
    throw error;
  }
  if (context.signal.aborted) throw cancelled(context.key);
  const reply: TurnReply = { content };
  if (toolCalls.length) reply.toolCalls = toolCalls;
  if (usage) reply.usage = usage;
  if (runtimeCompaction) reply.runtimeCompaction = runtimeCompaction;
  return reply;
}

function runOf(context: TurnContext, options: RunnerOptions): RuntimeRun {
  const { session } = context;
  let messages: RuntimeRun["messages"] | undefined;
  const run: RuntimeRun = {
    key: context.key,
    agent: context.agent,
    // Copied when the runtime first reads them (the echo never does).
    get messages() {
      messages ??= context.messages.map((m) => ({ role: m.role, content: m.content }));
      return messages;
    },
    input: context.input.content,
    session: { id: session.id, entryCount: session.entryCount, approxTokens: session.approxTokens },
    signal: context.signal,
  };
  if (options.tools) run.tools = options.tools;
  if (options.permission !== undefined) run.permission = options.permission;
  const runtimeSessionId = options.runtimeSessionId?.(context);
  if (runtimeSessionId !== undefined) run.runtimeSessionId = runtimeSessionId;
  const data = options.runtimeSessionData?.(context);
  if (data !== undefined) run.runtimeSessionData = data;
  const resumeAt = options.resumeAt?.(context);
  if (resumeAt !== undefined) run.resumeAt = resumeAt;
  const { prompt } = options;
  if (prompt) {
    // Built when a runtime first reads it: only the runtimes that keep their own session do.
    let built: string | undefined;
    Object.defineProperty(run, "prompt", {
      get: () => (built ??= prompt(context)),
      enumerable: true,
      configurable: true,
    });
  }
  const { steering } = context;
  if (steering) {
    run.steering = {
      pending: () => steering.pending(),
      take: async () => (await steering.take()).map((entry) => entry.content),
      wait: (signal) => steering.wait(signal),
    };
  }
  return run;
}

function addUsage(
  usage: TurnReply["usage"],
  event: Extract<RuntimeEvent, { type: "usage" }>,
): NonNullable<TurnReply["usage"]> {
  const next = { ...usage };
  if (event.model !== undefined) next.model = event.model;
  if (event.inputTokens !== undefined) next.inputTokens = (next.inputTokens ?? 0) + event.inputTokens;
  if (event.outputTokens !== undefined) next.outputTokens = (next.outputTokens ?? 0) + event.outputTokens;
  return next;
}

function cancelled(key: string, cause?: unknown): SessiondError {
  if (isSessiondError(cause, "TURN_CANCELLED")) return cause;
  return new SessiondError("TURN_CANCELLED", `the turn on ${key} was cancelled`);
}

/**
 * The runtime an agent uses: its configured model, else the offline echo. A config that cannot work
 * (bad URL, the key's variable unset) throws INVALID_ARGUMENT here, at start-up.
 */
export function runtimeFromConfig(config: ModelRuntimeConfig | undefined): Runtime {
  return config === undefined ? echoRuntime() : modelRuntime(config);
}

/** One line for the start-up message: which runtime, and for a model which provider, model and endpoint. */
export function describeRuntime(runtime: Runtime): string {
  const describe: unknown = (runtime as { describe?: unknown }).describe;
  return typeof describe === "function" ? String(describe.call(runtime)) : runtime.kind;
}
