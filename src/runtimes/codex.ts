import type { Codex, ThreadEvent, ThreadOptions } from "@openai/codex-sdk";
import { readUsage } from "../ledger/usage.js";
import { SessiondError } from "../model/errors.js";
import { optionalPackage } from "../model/optional-package.js";
import type { RuntimeEvent, RuntimeRun } from "../model/runtime.js";
import { childTraceEnv } from "../tracing/child-env.js";
import type { DescribedRuntime } from "./echo.js";

// Loaded on first use, like the Claude Code SDK: most gateways never run Codex.
const loadSdk = optionalPackage("@openai/codex-sdk", () => import("@openai/codex-sdk"));

export interface CodexRuntimeConfig {
  /** The agent's working directory (`--cd`). */
  cwd?: string;
  model?: string;
  /** Prepended to the first turn of a new thread (Codex has no separate system prompt per thread). */
  instructions?: string;
  /** The `codex` executable (or a script speaking `codex exec --experimental-json`); default: the SDK's own. */
  executable?: string;
  /** The agent's permission mode; a run's own (a work session) wins. */
  permission?: "ask-first" | "auto";
}

/**
 * LoCrew's modes as Codex's policies: `auto` writes in its workspace without asking; `ask-first` may only
 * read, and asks for anything more.
 */
const POLICY = {
  auto: { sandboxMode: "workspace-write", approvalPolicy: "never" },
  "ask-first": { sandboxMode: "read-only", approvalPolicy: "on-request" },
} as const satisfies Record<string, Pick<ThreadOptions, "sandboxMode" | "approvalPolicy">>;

/**
 * Codex through its SDK: a run resumes the stored thread (`resumeThread`) or starts one (`startThread`),
 * reports the thread id from `thread.started` at once, the agent's messages, its commands and MCP tool
 * calls, and token usage. Codex reports no cost: its runs are unpriced.
 */
export function codexRuntime(config: CodexRuntimeConfig = {}): DescribedRuntime {
  let codex: Promise<Codex> | undefined;
  const path = config.executable ? { codexPathOverride: config.executable } : {};
  const client = async () => {
    // Tracing on: a client of this run's own, whose CLI environment carries the turn's TRACEPARENT
    // (the SDK takes the environment per client, and replaces process.env with it).
    const env = childTraceEnv();
    if (env) return new (await loadSdk()).Codex({ ...path, env });
    codex ??= loadSdk().then(({ Codex }) => new Codex(path));
    return codex;
  };
  const threadOptions: ThreadOptions = { skipGitRepoCheck: true };
  if (config.cwd !== undefined) threadOptions.workingDirectory = config.cwd;
  if (config.model !== undefined) threadOptions.model = config.model;
  return {
    kind: "codex",
    describe: () =>
      `codex${config.model ? ` (${config.model})` : ""}${config.cwd ? ` in ${config.cwd}` : ""}`,
    async *run(run: RuntimeRun): AsyncGenerator<RuntimeEvent, void, undefined> {
      const resumed = run.runtimeSessionId !== undefined;
      const codex = await client();
      const permission = run.permission ?? config.permission;
      const options = permission === undefined ? threadOptions : { ...threadOptions, ...POLICY[permission] };
      const thread = resumed
        ? codex.resumeThread(run.runtimeSessionId as string, options)
        : codex.startThread(options);
      const prompt = run.prompt ?? run.input;
      const input = !resumed && config.instructions ? `${config.instructions}\n\n${prompt}` : prompt;
      const { events } = await thread.runStreamed(input, { signal: run.signal });
      for await (const event of events) yield* eventsOf(event);
    },
  };
}

function eventsOf(event: ThreadEvent): RuntimeEvent[] {
  switch (event.type) {
    case "thread.started":
      return [{ type: "runtime_session", id: event.thread_id }];
    case "item.completed": {
      const item = event.item;
      if (item.type === "agent_message") return item.text ? [{ type: "text", delta: item.text }] : [];
      if (item.type === "command_execution")
        return [
          {
            type: "tool_call",
            id: item.id,
            name: "command",
            arguments: { command: item.command },
            ...(item.status === "failed" ? { failed: true } : {}),
          },
        ];
      if (item.type === "mcp_tool_call")
        return [
          {
            type: "tool_call",
            id: item.id,
            name: `${item.server}.${item.tool}`,
            arguments: item.arguments,
            ...(item.status === "failed" ? { failed: true } : {}),
          },
        ];
      return [];
    }
    case "turn.completed":
      return [
        {
          type: "usage",
          // The cache counts are part of input_tokens, as in OpenAI's own usage (for the cost ledger).
          ...readUsage("openai", {
            prompt_tokens: event.usage.input_tokens,
            completion_tokens: event.usage.output_tokens,
            prompt_tokens_details: {
              cached_tokens: event.usage.cached_input_tokens,
              cache_write_tokens: event.usage.cache_write_input_tokens,
            },
          }),
        },
      ];
    case "turn.failed":
      throw new SessiondError("TURN_FAILED", `Codex turn failed: ${event.error.message}`);
    case "error":
      throw new SessiondError("TURN_FAILED", `Codex failed: ${event.message}`);
    default:
      return [];
  }
}
