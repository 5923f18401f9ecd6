import type Anthropic from "@anthropic-ai/sdk";
import { readUsage } from "../../ledger/usage.js";
import { SessiondError } from "../../model/errors.js";
import { optionalPackage } from "../../model/optional-package.js";
import type { Completion, CompletionRequest, ModelEndpoint, TextModel } from "../../model/text-model.js";
import { chatSpan } from "../../tracing/spans.js";
import { resolveApiKey, toLlmError, validateModelOptions } from "./errors.js";

/** The key env var defaults to ANTHROPIC_API_KEY when neither `apiKey` nor `apiKeyEnv` is given. */
export type AnthropicConfig = ModelEndpoint;

const PROVIDER = "anthropic";

const loadAnthropic = optionalPackage(
  "@anthropic-ai/sdk",
  async () => (await import("@anthropic-ai/sdk")).default,
);

/** An `@anthropic-ai/sdk` client made on the first request, so the package is loaded only when a model is called. */
export interface AnthropicClient {
  /** The key it sends, for scrubbing. */
  readonly secret: string;
  /** The SDK (for its error classes) and the client; PACKAGE_MISSING when the package is not installed. */
  load(): Promise<{ sdk: typeof Anthropic; client: Anthropic }>;
}

/**
 * An `@anthropic-ai/sdk` client for the config, checked at once (a bad option or a missing key throws
 * here). The key is always passed explicitly, so the SDK's own credential chain (profiles, config
 * files) is never consulted.
 */
export function createAnthropicClient(config: AnthropicConfig): AnthropicClient {
  validateModelOptions(PROVIDER, config);
  const apiKey = resolveApiKey(PROVIDER, config, "ANTHROPIC_API_KEY");
  if (apiKey === undefined) {
    throw new SessiondError(
      "INVALID_ARGUMENT",
      `${PROVIDER}: no API key (give apiKey or apiKeyEnv, or set ANTHROPIC_API_KEY)`,
    );
  }
  let client: Anthropic | undefined;
  return {
    secret: apiKey,
    async load() {
      const sdk = await loadAnthropic();
      client ??= new sdk({
        apiKey,
        ...(config.baseUrl !== undefined ? { baseURL: config.baseUrl } : {}),
        ...(config.timeoutMs !== undefined ? { timeout: config.timeoutMs } : {}),
        ...(config.maxRetries !== undefined ? { maxRetries: config.maxRetries } : {}),
      });
      return { sdk, client };
    },
  };
}

export function anthropicModel(config: AnthropicConfig): TextModel {
  const anthropic = createAnthropicClient(config);
  return {
    provider: PROVIDER,
    model: config.model,
    ...(config.contextWindow !== undefined ? { contextWindow: config.contextWindow } : {}),
    async complete(request: CompletionRequest): Promise<Completion> {
      const { sdk, client } = await anthropic.load();
      let response: Anthropic.Message;
      const span = chatSpan(PROVIDER, config.model, config.baseUrl);
      try {
        response = await client.messages.create(
          {
            model: config.model,
            max_tokens: request.maxTokens,
            system: request.system,
            messages: [{ role: "user", content: request.user }],
            ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
          },
          { ...(request.signal ? { signal: request.signal } : {}), headers: span.headers() },
        );
      } catch (error) {
        throw span.fail(toLlmError(error, PROVIDER, sdk, anthropic.secret, request.signal));
      }
      span.end({
        model: response.model,
        inputTokens: response.usage?.input_tokens,
        outputTokens: response.usage?.output_tokens,
        finishReason: response.stop_reason,
      });
      const text = (response.content ?? [])
        .map((block) => (block.type === "text" ? block.text : ""))
        .join("");
      return {
        text,
        model: response.model || config.model,
        ...readUsage("anthropic", response.usage),
      };
    },
  };
}
