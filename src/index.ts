/**
 * `sessiond`: the engine and what a caller of it needs. The layers below have their own entry points
 * (`sessiond/store`, `sessiond/keys`, `sessiond/gateway`, …; the list is `exports` in package.json).
 */
export type {
  AgentOptions,
  EngineConfig,
  IncognitoConfig,
  LifecycleConfig,
  ModelConfig,
} from "./config/engine-config.js";
export type { ChatMessage, InjectedContext, InjectionHook } from "./context/index.js";
export {
  type CompactResult,
  createEngine,
  type Engine,
  type EngineAppendOptions,
  type EngineHooks,
  type HistoryOptions,
  type OverrideChange,
  type PruneResult,
} from "./engine.js";
export type { IncognitoRule } from "./incognito/rules.js";
export type { Route, RoutingConfig } from "./keys/index.js";
export type { CallKind, CostLedger, LedgerEntry, LedgerGroup, LedgerTotal } from "./ledger/entry.js";
export type { ModelPrice } from "./ledger/price.js";
export type { Clock } from "./lifecycle/clock.js";
export type * from "./model/entry.js";
export type * from "./model/envelope.js";
export { type ErrorCode, isSessiondError, SessiondError } from "./model/errors.js";
export type { Runtime, RuntimeEvent, RuntimeMessage, RuntimeRun, RuntimeSteering } from "./model/runtime.js";
export type * from "./model/session.js";
export type * from "./model/summarizer.js";
export type * from "./model/text-model.js";
export type {
  AgentItem,
  AgentMessageItem,
  FunctionCallItem,
  FunctionCallResultItem,
} from "./sdk/agent-items.js";
export type { AgentsSession } from "./sdk/agents-session.js";
export type { SharedConversation, SharedMessage, ShareLink } from "./shares/share.js";
export type { Shares } from "./shares/shares.js";
export type {
  AppendResult,
  DeleteResult,
  Durability,
  ResetResult,
  SessionPage,
  SessionQuery,
  Store,
} from "./store/store.js";
export type * from "./turns/turn.js";
