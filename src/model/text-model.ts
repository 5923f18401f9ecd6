/**
 * A language model that completes text: implemented by the LLM clients in `runtimes/llm/`, used by
 * compaction (summaries) and titles, which sit below the runtimes.
 */
export interface CompletionRequest {
  system: string;
  user: string;
  maxTokens: number;
  temperature?: number;
  signal?: AbortSignal;
}

export interface Completion {
  text: string;
  model: string;
  inputTokens?: number;
  outputTokens?: number;
  /** As the provider reported them (see ledger/usage.ts): prompt-cache reads and writes, its own cost in USD. */
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
  reportedUsd?: number;
}

export interface TextModel {
  /** The provider: `openai` (any OpenAI-compatible API) or `anthropic`. */
  readonly provider: string;
  readonly model: string;
  /** The model's context window in tokens, when configured. */
  readonly contextWindow?: number;
  complete(request: CompletionRequest): Promise<Completion>;
}

/** Where a language model is served and how to reach it; shared by every provider's config. */
export interface ModelEndpoint {
  /** OpenAI-compatible: e.g. `http://127.0.0.1:11434/v1` (Ollama). Anthropic: the SDK's default. */
  baseUrl?: string;
  model: string;
  apiKey?: string;
  /** Name of the environment variable holding the key, read when `apiKey` is not given. */
  apiKeyEnv?: string;
  contextWindow?: number;
  timeoutMs?: number;
  maxRetries?: number;
}
