export { isCredentialKey, REDACTED, redactSecrets } from "../secrets/index.js";
export { type AssembledContext, type AssembleInput, assembleContext, SUMMARY_HEADER } from "./assemble.js";
export type { ChatMessage, ChatRole } from "./chat-message.js";
export { DROPPED_KEYS, fitJson, type JsonValue } from "./fit-json.js";
export {
  type CollectedInjections,
  collectInjected,
  type InjectedContext,
  type InjectionContext,
  type InjectionError,
  type InjectionHook,
  injectedMessage,
  stripInjected,
} from "./injected.js";
export {
  countMessagesTokens,
  countTokens,
  encodingForModel,
  estimateMessagesTokens,
  estimateTokens,
  loadTokenCounter,
  type TokenCounter,
  type TokenEncoding,
  tokenizerLoads,
} from "./tokens.js";
export { type ReportedToolCall, recordToolCalls, TOOL_CALL_LIMITS } from "./tool-calls.js";
export { FAILED_CALL_ID, RECAP_MAX_DISTINCT, toolCallRecap } from "./tool-recap.js";
export {
  statelessWindow,
  WINDOW_DEFAULTS,
  type WindowMessage,
  type WindowOptions,
  windowBudget,
} from "./window.js";
