import type OpenAI from "openai";
import type {
  ChatCompletionChunk,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from "openai/resources/chat/completions";
import { type ReportedUsage, readUsage } from "../../ledger/usage.js";
import { optionalPackage } from "../../model/optional-package.js";
import type { Completion, CompletionRequest, ModelEndpoint, TextModel } from "../../model/text-model.js";
import { chatSpan } from "../../tracing/spans.js";
import { LlmError, resolveApiKey, toLlmError, validateModelOptions } from "./errors.js";

export type OpenAiChatConfig = ModelEndpoint & {
  /** e.g. `https://api.openai.com/v1`, `http://127.0.0.1:11434/v1` (Ollama). */
  baseUrl: string;
};

const PROVIDER = "openai";
/** The client refuses to start without a key; this one is never sent (its header is nulled). */
const NO_KEY = "sessiond-no-key";

const loadOpenAi = optionalPackage("openai", async () => (await import("openai")).default);

/** An `openai` client made on the first request, so the package is loaded only when a model is called. */
export interface OpenAiClient {
  /** The key it sends, for scrubbing; undefined when none is sent. */
  readonly secret: string | undefined;
  /** The SDK (for its error classes) and the client; PACKAGE_MISSING when `openai` is not installed. */
  load(): Promise<{ sdk: typeof OpenAI; client: OpenAI }>;
}

/**
 * An `openai` client for the config, checked at once (a bad option or an unset key variable throws
 * here). Without a key (local servers such as Ollama or llama.cpp) no Authorization header is sent;
 * OPENAI_API_KEY / OPENAI_BASE_URL are never read implicitly, so a key meant for api.openai.com cannot
 * leak to another base URL.
 */
export function createOpenAiClient(config: OpenAiChatConfig): OpenAiClient {
  validateModelOptions(PROVIDER, config, { requireBaseUrl: true });
  const apiKey = resolveApiKey(PROVIDER, config);
  let client: OpenAI | undefined;
  return {
    secret: apiKey,
    async load() {
      const sdk = await loadOpenAi();
      client ??= new sdk({
        baseURL: config.baseUrl,
        apiKey: apiKey ?? NO_KEY,
        ...(apiKey === undefined ? { defaultHeaders: { Authorization: null } } : {}),
        organization: null,
        project: null,
        ...(config.timeoutMs !== undefined ? { timeout: config.timeoutMs } : {}),
        ...(config.maxRetries !== undefined ? { maxRetries: config.maxRetries } : {}),
      });
      return { sdk, client };
    },
  };
}

export function openAiChatModel(config: OpenAiChatConfig): TextModel {
  const openai = createOpenAiClient(config);
  return {
    provider: PROVIDER,
    model: config.model,
    ...(config.contextWindow !== undefined ? { contextWindow: config.contextWindow } : {}),
    async complete(request: CompletionRequest): Promise<Completion> {
      const { sdk, client } = await openai.load();
      let response: OpenAI.Chat.ChatCompletion;
      const span = chatSpan(PROVIDER, config.model, client.baseURL);
      try {
        response = await client.chat.completions.create(
          {
            model: config.model,
            messages: [
              { role: "system", content: request.system },
              { role: "user", content: request.user },
            ],
            max_tokens: request.maxTokens,
            ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
          },
          { ...(request.signal ? { signal: request.signal } : {}), headers: span.headers() },
        );
      } catch (error) {
        const failure = toLlmError(error, PROVIDER, sdk, openai.secret, request.signal);
        span.fail(failure);
        throw failure;
      }
      span.end({
        model: response.model,
        inputTokens: response.usage?.prompt_tokens,
        outputTokens: response.usage?.completion_tokens,
      });
      const choice = response.choices?.[0];
      if (!choice) throw new LlmError(PROVIDER, "bad_response", `${PROVIDER}: the reply has no choices`);
      return {
        text: choice.message?.content ?? "",
        model: response.model || config.model,
        ...readUsage("openai", response.usage),
      };
    },
  };
}

export interface ChatToolCall {
  id: string;
  name: string;
  /** The JSON arguments as the model wrote them (not parsed: models can write invalid JSON). */
  arguments: string;
}

export interface ChatUsage extends ReportedUsage {
  inputTokens: number;
  outputTokens: number;
}

export interface ChatResult {
  text: string;
  model: string;
  /** `stop`, `length`, `tool_calls`, … as the server reported; null when it sent none. */
  finishReason: string | null;
  toolCalls: ChatToolCall[];
  usage?: ChatUsage;
}

export type ChatStreamEvent = { type: "text"; delta: string } | { type: "done"; result: ChatResult };

export interface StreamChatOptions {
  messages: ChatCompletionMessageParam[];
  model: string;
  signal?: AbortSignal;
  tools?: ChatCompletionTool[];
  maxTokens?: number;
  temperature?: number;
}

/**
 * Streams one chat completion: a `text` event per content delta, then one `done` event with the
 * whole text, the tool calls assembled from their deltas, and usage (requested with
 * `stream_options.include_usage`; servers that ignore it give no usage).
 * Failures are thrown as LlmError.
 */
export async function* streamChat(
  openai: OpenAiClient,
  options: StreamChatOptions,
): AsyncGenerator<ChatStreamEvent, void, undefined> {
  const { sdk, client } = await openai.load();
  let text = "";
  let model = options.model;
  let finishReason: string | null = null;
  let usage: ChatUsage | undefined;
  const calls = new Map<number, ChatToolCall>();
  const span = chatSpan(PROVIDER, options.model, client.baseURL);
  try {
    const stream = await client.chat.completions.create(
      {
        model: options.model,
        messages: options.messages,
        stream: true,
        stream_options: { include_usage: true },
        ...(options.tools?.length ? { tools: options.tools } : {}),
        ...(options.maxTokens !== undefined ? { max_tokens: options.maxTokens } : {}),
        ...(options.temperature !== undefined ? { temperature: options.temperature } : {}),
      },
      { ...(options.signal ? { signal: options.signal } : {}), headers: span.headers() },
    );
    for await (const chunk of stream as AsyncIterable<ChatCompletionChunk>) {
      if (chunk.model) model = chunk.model;
      if (chunk.usage) {
        usage = {
          ...readUsage("openai", chunk.usage),
          inputTokens: chunk.usage.prompt_tokens,
          outputTokens: chunk.usage.completion_tokens,
        };
      }
      const choice = chunk.choices?.[0];
      if (!choice) continue;
      if (choice.finish_reason) finishReason = choice.finish_reason;
      const delta = choice.delta;
      if (delta?.content) {
        text += delta.content;
        yield { type: "text", delta: delta.content };
      }
      for (const part of delta?.tool_calls ?? []) {
        const call = calls.get(part.index) ?? { id: "", name: "", arguments: "" };
        if (part.id) call.id = part.id;
        if (part.function?.name) call.name += part.function.name;
        if (part.function?.arguments) call.arguments += part.function.arguments;
        calls.set(part.index, call);
      }
    }
  } catch (error) {
    const failure = toLlmError(error, PROVIDER, sdk, openai.secret, options.signal);
    span.fail(failure);
    throw failure;
  }
  // The SDK ends a stream quietly when its signal aborts; the caller must not mistake that for a reply.
  if (options.signal?.aborted) {
    span.fail({ code: "aborted" });
    throw new LlmError(PROVIDER, "aborted", `${PROVIDER}: request aborted`);
  }
  span.end({ model, finishReason, ...usage });
  const toolCalls = [...calls.entries()].sort((a, b) => a[0] - b[0]).map(([, call]) => call);
  yield {
    type: "done",
    result: { text, model, finishReason, toolCalls, ...(usage ? { usage } : {}) },
  };
}
