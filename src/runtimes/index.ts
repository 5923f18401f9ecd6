export type { Runtime, RuntimeEvent, RuntimeMessage, RuntimeRun } from "../model/runtime.js";
export { type A2aRuntimeConfig, a2aRuntime } from "./a2a.js";
export { type AgentRuntimeSettings, RUNTIME_KINDS, type RuntimeKind } from "./agents.js";
export { type ClaudeCodeRuntimeConfig, claudeCodeRuntime } from "./claude-code.js";
export { type CodexRuntimeConfig, codexRuntime } from "./codex.js";
export { type DescribedRuntime, ECHO_LABEL, echoReply, echoRuntime } from "./echo.js";
export {
  anthropicMessages,
  DEFAULT_ANTHROPIC_MAX_TOKENS,
  DEFAULT_OPENAI_BASE_URL,
  type ModelRuntime,
  type ModelRuntimeConfig,
  modelRuntime,
} from "./model.js";
export { NEW_ACTIVITY_LIMIT, newActivityPrompt } from "./prompt.js";
export { describeRuntime, type RunnerOptions, runnerFor, runtimeFromConfig } from "./runner.js";
export {
  type AgentChange,
  AgentRuntimes,
  type AgentView,
  type ConversationRuntimeView,
  clearedNotice,
  movedNotice,
  type RuntimeSessionView,
} from "./sessions/agent-runtimes.js";
export type { BranchOutcome, RuntimeBranch } from "./sessions/branch.js";
export {
  type CostBaseline,
  type CostTotals,
  measureTotal,
  perRunCost,
  type RunCost,
  type RunCostStatus,
} from "./sessions/cost.js";
export { MemoryRuntimeSessionStore } from "./sessions/memory.js";
export { sessionRunner } from "./sessions/runner.js";
export { SqliteRuntimeSessionStore } from "./sessions/sqlite.js";
export type {
  AttentionMark,
  RunCostRecord,
  RuntimeSessionRecord,
  RuntimeSessionStore,
} from "./sessions/store.js";
