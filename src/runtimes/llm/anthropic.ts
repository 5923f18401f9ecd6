import Anthropic from "@anthropic-ai/sdk";
import { SessiondError } from "../../model/errors.js";
import type { Completion, CompletionRequest, ModelEndpoint, TextModel } from "../../model/text-model.js";
import { resolveApiKey, toLlmError, validateModelOptions } from "./errors.js";

/** The key env var defaults to ANTHROPIC_API_KEY when neither `apiKey` nor `apiKeyEnv` is given. */
export type AnthropicConfig = ModelEndpoint;

const PROVIDER = "anthropic";

/**
 * An `@anthropic-ai/sdk` client for the config. The key is always passed explicitly, so the SDK's
 * own credential chain (profiles, config files) is never consulted.
 */
export function createAnthropicClient(config: AnthropicConfig): Anthropic {
  validateModelOptions(PROVIDER, config);
  const apiKey = resolveApiKey(PROVIDER, config, "ANTHROPIC_API_KEY");
  if (apiKey === undefined) {
    throw new SessiondError(
      "INVALID_ARGUMENT",
      `${PROVIDER}: no API key (give apiKey or apiKeyEnv, or set ANTHROPIC_API_KEY)`,
    );
  }
  return new Anthropic({
    apiKey,
    ...(config.baseUrl !== undefined ? { baseURL: config.baseUrl } : {}),
    ...(config.timeoutMs !== undefined ? { timeout: config.timeoutMs } : {}),
    ...(config.maxRetries !== undefined ? { maxRetries: config.maxRetries } : {}),
  });
}

export function anthropicModel(config: AnthropicConfig): TextModel {
  const client = createAnthropicClient(config);
  const secret = client.apiKey;
  return {
    provider: PROVIDER,
    model: config.model,
    ...(config.contextWindow !== undefined ? { contextWindow: config.contextWindow } : {}),
    async complete(request: CompletionRequest): Promise<Completion> {
      let response: Anthropic.Message;
      try {
        response = await client.messages.create(
          {
            model: config.model,
            max_tokens: request.maxTokens,
            system: request.system,
            messages: [{ role: "user", content: request.user }],
            ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
          },
          request.signal ? { signal: request.signal } : undefined,
        );
      } catch (error) {
        throw toLlmError(error, PROVIDER, Anthropic, secret, request.signal);
      }
      const text = (response.content ?? [])
        .map((block) => (block.type === "text" ? block.text : ""))
        .join("");
      return {
        text,
        model: response.model || config.model,
        ...(response.usage
          ? { inputTokens: response.usage.input_tokens, outputTokens: response.usage.output_tokens }
          : {}),
      };
    },
  };
}
