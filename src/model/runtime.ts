/** How the offline echo runtime's replies start: they repeat the input, so they say nothing of their own. */
export const ECHO_LABEL = "[echo runtime — no model configured]";

/**
 * What produces replies: an LLM API, Claude Code, Codex, an A2A agent, or the offline `echo`.
 * Declared here so the turn layer can drive runtimes that live above it.
 */
export type RuntimeEvent =
  | { type: "text"; delta: string }
  | { type: "tool_call"; id?: string; name: string; arguments: unknown; failed?: boolean }
  /** One model call's usage as the provider reported it (cache reads/writes and its own cost when it gave them). */
  | {
      type: "usage";
      model?: string;
      inputTokens?: number;
      outputTokens?: number;
      cacheReadTokens?: number;
      cacheWriteTokens?: number;
      reportedUsd?: number;
    }
  /** The runtime's own handle for this conversation (Claude Code session id, Codex thread id…), as soon as known; `data` is stored with it and given back as `runtimeSessionData`. */
  | { type: "runtime_session"; id: string; data?: Record<string, string> }
  /**
   * Where the runtime's own conversation stands once a turn of the run is answered (Claude Code: the uuid of
   * its transcript's last entry): a fork or rewind to the end of this run resumes there.
   */
  | { type: "checkpoint"; id: string }
  /** The runtime compacted its own history. */
  | { type: "compacted"; beforeTokens: number; afterTokens: number }
  /** A cost figure: `totalUsd` a running total for the runtime session, or `runUsd` for this run. */
  | { type: "cost"; totalUsd?: number; runUsd?: number };

export interface RuntimeMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

export interface RuntimeRun {
  key: string;
  agent: string;
  /** The assembled context: instructions, summary, history, injected context, the input last. */
  messages: RuntimeMessage[];
  /** The input's text. */
  input: string;
  /** Facts about the session, for runtimes that report them (echo). */
  session: { id: string; entryCount: number; approxTokens: number };
  /** The stored runtime session to resume, if any. */
  runtimeSessionId?: string;
  /** What else was stored with it (A2A: the task id of a task waiting for input or auth). */
  runtimeSessionData?: Record<string, string>;
  /**
   * Set after a fork or rewind of the conversation: continue `runtimeSessionId` as a new branch from this
   * checkpoint (a `checkpoint` event's id) instead of its end; the runtime reports the branch's own id.
   */
  resumeAt?: string;
  /**
   * For runtimes that keep their own session (Claude Code, Codex, A2A): what to send this run, the new
   * activity since the agent's previous finished run. Runtimes given the whole context use `messages`.
   */
  prompt?: string;
  signal: AbortSignal;
  /**
   * The effective permission mode (Claude Code, Codex): `auto` writes without asking (the agent's mode, or a
   * work session in this conversation), `ask-first` asks; undefined leaves the runtime's own default.
   */
  permission?: "ask-first" | "auto";
  /**
   * Tools the runtime may let the model call this run (model runtimes; others ignore them). With tools set,
   * every call the model makes goes to `execute`, which refuses any tool it did not offer.
   */
  tools?: RuntimeTools;
  /**
   * Messages that arrived for this turn while it runs (queue mode `steer`). A runtime with tool rounds
   * checks it at each tool boundary, Claude Code hands them to its CLI as they arrive; runtimes that
   * never read it leave the messages waiting as follow-ups.
   */
  steering?: RuntimeSteering;
}

/** The running turn's way to its steering messages. */
export interface RuntimeSteering {
  /** Whether a steering message waits (cheap; checked before each tool call). */
  pending(): boolean;
  /** Takes the waiting messages, oldest first, once they are stored as the session's user entries. */
  take(): Promise<string[]>;
  /** Resolves true once a steering message waits (at once if one does), false when `signal` aborts first. */
  wait(signal: AbortSignal): Promise<boolean>;
}

/** An OpenAI function tool definition. */
export interface RuntimeToolDefinition {
  type: "function";
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

export interface RuntimeToolCall {
  id?: string;
  name: string;
  /** The JSON arguments as the model wrote them. */
  arguments: string;
}

export interface RuntimeToolResult {
  /** What goes back to the model as the tool's result. */
  content: string;
  /** Refused or errored: the call is recorded as failed. */
  failed?: boolean;
}

export interface RuntimeTools {
  /** What the model is offered; may be empty (then every call is refused). */
  definitions: RuntimeToolDefinition[];
  execute(call: RuntimeToolCall, signal: AbortSignal): Promise<RuntimeToolResult>;
}

export interface Runtime {
  /** `model`, `echo`, `claude-code`, `codex`, `a2a`. */
  readonly kind: string;
  /**
   * What its runs leave to keep beside the session; both when absent. A runtime that never resumes a
   * session of its own and costs nothing (echo) has nothing to look up or record per run.
   */
  readonly keeps?: { readonly runtimeSessions: boolean; readonly costs: boolean };
  /** Errors are thrown (the turn records them); events stream until the run ends. */
  run(run: RuntimeRun): AsyncIterable<RuntimeEvent>;
}
