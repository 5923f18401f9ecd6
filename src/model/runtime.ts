/**
 * What produces replies: an LLM API, Claude Code, Codex, an A2A agent, or the offline `echo`.
 * Declared here so the turn layer can drive runtimes that live above it.
 */
export type RuntimeEvent =
  | { type: "text"; delta: string }
  | { type: "tool_call"; id?: string; name: string; arguments: unknown; failed?: boolean }
  | { type: "usage"; model?: string; inputTokens?: number; outputTokens?: number }
  /** The runtime's own handle for this conversation (Claude Code session id, Codex thread id…), as soon as known. */
  | { type: "runtime_session"; id: string }
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
  signal: AbortSignal;
}

export interface Runtime {
  /** `model`, `echo`, `claude-code`, `codex`, `a2a`. */
  readonly kind: string;
  /** Errors are thrown (the turn records them); events stream until the run ends. */
  run(run: RuntimeRun): AsyncIterable<RuntimeEvent>;
}
