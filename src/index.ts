export { type CompactionOutcome, Compactor } from "./compaction/compactor.js";
export { type CompactionPolicy, DEFAULT_COMPACTION } from "./compaction/policy.js";
export { modelSummarizer } from "./compaction/summarizers/model.js";
export { extractIdentifiers, offlineSummarizer } from "./compaction/summarizers/offline.js";
export type { AgentOptions, EngineConfig, ModelConfig } from "./config/engine-config.js";
export { type LoadedConfig, type LoadOptions, loadConfig } from "./config/load.js";
export {
  assembleContext,
  type ChatMessage,
  countTokens,
  type InjectedContext,
  type InjectionHook,
  recordToolCalls,
  redactSecrets,
  SUMMARY_HEADER,
  statelessWindow,
  toolCallRecap,
} from "./context/index.js";
export {
  type CompactResult,
  createEngine,
  type Engine,
  type EngineHooks,
  type HistoryOptions,
} from "./engine.js";
export { type ImportOptions, type ImportReport, importSessions } from "./import/importer.js";
export { type ReadOptions, readSource } from "./import/read-source.js";
export { IMPORT_SOURCES, type ImportProblem, type ImportSource, type SourceRead } from "./import/types.js";
export * from "./keys/index.js";
export { type Clock, ManualClock, systemClock } from "./lifecycle/clock.js";
export { offlineTitle, titleFromExchange } from "./lifecycle/titles.js";
export type * from "./model/entry.js";
export type * from "./model/envelope.js";
export { type ErrorCode, isSessiondError, SessiondError } from "./model/errors.js";
export type * from "./model/session.js";
export type * from "./model/summarizer.js";
export type * from "./model/text-model.js";
export * from "./runtimes/index.js";
export { createTextModel, type TextModelConfig } from "./runtimes/llm/index.js";
export { JsonlStore, type JsonlStoreOptions } from "./store/jsonl/jsonl-store.js";
export type { LineProblem } from "./store/jsonl/session-file.js";
export { MemoryStore } from "./store/memory/memory-store.js";
export { openStore, type StoreConfig } from "./store/open.js";
export { SqliteStore, type SqliteStoreOptions } from "./store/sqlite/sqlite-store.js";
export type * from "./store/store.js";
export { Lanes, type LanesOptions } from "./turns/lanes.js";
export type * from "./turns/turn.js";
