export type { Runtime, RuntimeEvent, RuntimeMessage, RuntimeRun } from "../model/runtime.js";
export { type DescribedRuntime, ECHO_LABEL, echoReply, echoRuntime } from "./echo.js";
export {
  anthropicMessages,
  DEFAULT_ANTHROPIC_MAX_TOKENS,
  DEFAULT_OPENAI_BASE_URL,
  type ModelRuntime,
  type ModelRuntimeConfig,
  modelRuntime,
} from "./model.js";
export { describeRuntime, type RunnerOptions, runnerFor, runtimeFromConfig } from "./runner.js";
