/** `sessiond/runtimes`: the runtime adapters, runtime sessions and the text models they call. */
export * from "../runtimes/index.js";
export { createTextModel, type TextModelConfig } from "../runtimes/llm/index.js";
