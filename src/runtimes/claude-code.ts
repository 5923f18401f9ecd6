import type { Options, SDKMessage } from "@anthropic-ai/claude-agent-sdk";
import { readUsage } from "../ledger/usage.js";
import { SessiondError } from "../model/errors.js";
import { optionalPackage } from "../model/optional-package.js";
import type { RuntimeEvent, RuntimeRun } from "../model/runtime.js";
import { childTraceEnv } from "../tracing/child-env.js";
import { SteeredPrompt } from "./claude-code-input.js";
import type { DescribedRuntime } from "./echo.js";

// Loaded on first use: the SDK is large, and most gateways never run Claude Code.
const loadSdk = optionalPackage(
  "@anthropic-ai/claude-agent-sdk",
  () => import("@anthropic-ai/claude-agent-sdk"),
);

export interface ClaudeCodeRuntimeConfig {
  /** The agent's working directory: Claude Code reads and writes there. */
  cwd?: string;
  /** Claude Code's model name (`sonnet`, `opus`, a full model id). */
  model?: string;
  /** Appended to Claude Code's own system prompt. */
  instructions?: string;
  /** The `claude` executable (or a script speaking its stream-json protocol); default: the SDK's own. */
  executable?: string;
  /** The agent's permission mode; a run's own (a work session) wins. */
  permission?: "ask-first" | "auto";
  /** "Let it compact its own history": Claude Code's auto-compaction on or off (default: its own setting). */
  selfCompact?: "on" | "off";
  /** The token count at which it compacts its own history. */
  selfCompactWindow?: number;
}

/** LoCrew's modes as Claude Code's: `auto` accepts its edits without asking; `ask-first` asks (its default). */
const PERMISSION_MODE = { auto: "acceptEdits", "ask-first": "default" } as const;

/**
 * Claude Code through its Agent SDK. A run resumes the stored session id (the SDK runs the CLI with
 * `--resume`), reports the session id from the CLI's `system/init` line at once, its text and tool calls,
 * its own compaction (`compact_boundary`), and its `total_cost_usd` — a running total for the session.
 * A run that may take steers streams its input (SteeredPrompt) and reads until its last steer is answered.
 * Each answered turn reports a checkpoint, the uuid of the transcript's last entry (an assistant message,
 * or a tool result); a run given `resumeAt` resumes with `forkSession` and `resumeSessionAt` at it.
 */
export function claudeCodeRuntime(config: ClaudeCodeRuntimeConfig = {}): DescribedRuntime {
  return {
    kind: "claude-code",
    describe: () =>
      `claude-code${config.model ? ` (${config.model})` : ""}${config.cwd ? ` in ${config.cwd}` : ""}`,
    run: (run) => claudeCodeRun(config, run),
  };
}

async function* claudeCodeRun(
  config: ClaudeCodeRuntimeConfig,
  run: RuntimeRun,
): AsyncGenerator<RuntimeEvent, void, undefined> {
  const abortController = new AbortController();
  const abort = () => abortController.abort();
  run.signal.addEventListener("abort", abort, { once: true });
  const options: Options = { abortController };
  if (config.cwd !== undefined) options.cwd = config.cwd;
  if (config.model !== undefined) options.model = config.model;
  if (config.executable !== undefined) options.pathToClaudeCodeExecutable = config.executable;
  if (config.instructions) {
    options.systemPrompt = { type: "preset", preset: "claude_code", append: config.instructions };
  }
  if (run.runtimeSessionId !== undefined) {
    options.resume = run.runtimeSessionId;
    // A fork or rewind: a new session with the transcript up to the checkpoint, the stored one unchanged.
    if (run.resumeAt !== undefined) {
      options.forkSession = true;
      options.resumeSessionAt = run.resumeAt;
    }
  }
  // Tracing on: the CLI's environment carries this turn's TRACEPARENT (the SDK replaces, not merges, `env`).
  const env = childTraceEnv();
  if (env) options.env = env;
  const permission = run.permission ?? config.permission;
  if (permission !== undefined) options.permissionMode = PERMISSION_MODE[permission];
  // Its compactions come back as compact_boundary messages, recorded as LoCrew's note.
  if (config.selfCompact !== undefined || config.selfCompactWindow !== undefined) {
    options.settings = {
      ...(config.selfCompact !== undefined ? { autoCompactEnabled: config.selfCompact === "on" } : {}),
      ...(config.selfCompactWindow !== undefined ? { autoCompactWindow: config.selfCompactWindow } : {}),
    };
  }
  let replied = false;
  /** The uuid of the transcript's last entry seen: where a branch that keeps this turn resumes. */
  let last: string | undefined;
  const { query } = await loadSdk();
  const text = run.prompt ?? run.input;
  const steered = run.steering ? new SteeredPrompt(text, run.steering, run.signal) : undefined;
  try {
    for await (const message of query({ prompt: steered?.messages() ?? text, options })) {
      for (const event of eventsOf(message)) {
        if (event.type === "text") replied = true;
        yield event;
      }
      if ((message.type === "assistant" || message.type === "user") && message.uuid && !isReplay(message))
        last = message.uuid;
      if (message.type === "result") {
        steered?.answered(message);
        if (message.subtype !== "success" || message.is_error) {
          const errors =
            "errors" in message && Array.isArray(message.errors) ? message.errors.join("; ") : "";
          throw new SessiondError(
            "TURN_FAILED",
            `Claude Code ended with ${message.subtype}${errors ? `: ${errors}` : ""}`,
          );
        }
        if (!replied && message.result) yield { type: "text", delta: message.result };
        if (last !== undefined) yield { type: "checkpoint", id: last };
        replied = false;
      }
    }
  } finally {
    steered?.close();
    run.signal.removeEventListener("abort", abort);
  }
}

/** A user message the CLI echoes back (its own prompt, replayed): not an entry it wrote this turn. */
function isReplay(message: SDKMessage): boolean {
  return "isReplay" in message && message.isReplay === true;
}

function eventsOf(message: SDKMessage): RuntimeEvent[] {
  switch (message.type) {
    case "system":
      if (message.subtype === "init") return [{ type: "runtime_session", id: message.session_id }];
      if (message.subtype === "compact_boundary") {
        const { pre_tokens, post_tokens } = message.compact_metadata;
        return [{ type: "compacted", beforeTokens: pre_tokens, afterTokens: post_tokens ?? 0 }];
      }
      return [];
    case "assistant": {
      const events: RuntimeEvent[] = [];
      for (const block of message.message.content) {
        if (block.type === "text" && block.text) events.push({ type: "text", delta: block.text });
        else if (block.type === "tool_use")
          events.push({ type: "tool_call", id: block.id, name: block.name, arguments: block.input });
      }
      return events;
    }
    case "result": {
      const events: RuntimeEvent[] = [
        // Anthropic's usage shape, cache creation and reads included (for the cost ledger).
        { type: "usage", ...readUsage("anthropic", message.usage) },
      ];
      if (typeof message.total_cost_usd === "number")
        events.push({ type: "cost", totalUsd: message.total_cost_usd });
      return events;
    }
    default:
      return [];
  }
}
