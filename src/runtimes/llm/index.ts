import { SessiondError } from "../../model/errors.js";
import type { TextModel } from "../../model/text-model.js";
import { type AnthropicConfig, anthropicModel } from "./anthropic.js";
import { type OpenAiChatConfig, openAiChatModel } from "./openai-chat.js";

export type TextModelConfig =
  | ({ provider: "openai" } & OpenAiChatConfig)
  | ({ provider: "anthropic" } & AnthropicConfig);

/** A TextModel for the configured provider; INVALID_ARGUMENT for an unknown provider or a bad config. */
export function createTextModel(config: TextModelConfig): TextModel {
  switch (config.provider) {
    case "openai":
      return openAiChatModel(config);
    case "anthropic":
      return anthropicModel(config);
    default: {
      const provider: unknown = (config as { provider?: unknown } | null)?.provider;
      throw new SessiondError("INVALID_ARGUMENT", `unknown LLM provider ${JSON.stringify(provider)}`, {
        details: { provider },
      });
    }
  }
}

export { type AnthropicConfig, anthropicModel, createAnthropicClient } from "./anthropic.js";
export {
  isLlmError,
  LlmError,
  type LlmErrorKind,
  scrubSecret,
} from "./errors.js";
export {
  type ChatResult,
  type ChatStreamEvent,
  type ChatToolCall,
  type ChatUsage,
  createOpenAiClient,
  type OpenAiChatConfig,
  openAiChatModel,
  type StreamChatOptions,
  streamChat,
} from "./openai-chat.js";
