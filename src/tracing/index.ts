export { childTraceEnv } from "./child-env.js";
export {
  CONVERSATION_KEY_FILE,
  hashConversationId,
  type TracingSettings,
  tracingSettings,
} from "./settings.js";
export {
  type ChatSpan,
  chatSpan,
  currentTraceHeaders,
  noteIncomingTrace,
  tracedTool,
  tracedTurn,
  withConversation,
  withIncomingTrace,
} from "./spans.js";
export { activeTracing, startTracing, stopTracing } from "./tracer.js";
