/**
 * Token usage as a provider reported it, read from the provider's own response shape. Field names are the
 * providers': OpenAI Chat Completions `usage.prompt_tokens` / `completion_tokens` /
 * `prompt_tokens_details.cached_tokens`; Anthropic Messages `usage.input_tokens` / `output_tokens` /
 * `cache_creation_input_tokens` / `cache_read_input_tokens`; OpenAI-compatible servers that bill (OpenRouter)
 * add `usage.cost` (USD credits) and `prompt_tokens_details.cache_write_tokens`.
 */
export interface ReportedUsage {
  inputTokens?: number;
  outputTokens?: number;
  /** Input tokens served from the provider's prompt cache. */
  cacheReadTokens?: number;
  /** Input tokens written to the provider's prompt cache. */
  cacheWriteTokens?: number;
  /** A cost the provider itself reported for the call, in USD. */
  reportedUsd?: number;
}

export type UsageShape = "openai" | "anthropic";

function count(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : undefined;
}

function record(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === "object" ? (value as Record<string, unknown>) : undefined;
}

function defined(usage: ReportedUsage): ReportedUsage {
  return Object.fromEntries(Object.entries(usage).filter(([, v]) => v !== undefined)) as ReportedUsage;
}

/** Reads a response's `usage` object; undefined when the response carried none (never a made-up zero). */
export function readUsage(shape: UsageShape, usage: unknown): ReportedUsage | undefined {
  const u = record(usage);
  if (!u) return undefined;
  if (shape === "anthropic") {
    return defined({
      inputTokens: count(u.input_tokens),
      outputTokens: count(u.output_tokens),
      cacheReadTokens: count(u.cache_read_input_tokens),
      cacheWriteTokens: count(u.cache_creation_input_tokens),
    });
  }
  const details = record(u.prompt_tokens_details);
  return defined({
    inputTokens: count(u.prompt_tokens),
    outputTokens: count(u.completion_tokens),
    cacheReadTokens: count(details?.cached_tokens),
    cacheWriteTokens: count(details?.cache_write_tokens),
    reportedUsd: count(u.cost),
  });
}
