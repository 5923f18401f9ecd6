import type * as Zod from "zod";

/** The parts of `sessiond.yaml` that appear in more than one place (agents, sessions, models): schema.ts. */
export function buildPartSchemas(z: typeof Zod.z) {
  const compactionSettings = z.strictObject({
    enabled: z
      .boolean()
      .optional()
      .describe("false: no automatic compaction (`sessions compact` still compacts)."),
    max_messages: z
      .number()
      .int()
      .min(2)
      .optional()
      .describe("Compact when the context holds more messages than this (default 50)."),
    keep_recent: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe("Messages a compaction keeps, about (default 20); below max_messages."),
    max_tokens: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe("Compact past this many estimated tokens (default 100,000)."),
    window_fraction: z
      .number()
      .gt(0)
      .max(1)
      .optional()
      .describe("Compact past this share of the model's context window (default 0.75)."),
    source_max_chars: z
      .number()
      .int()
      .min(100)
      .optional()
      .describe("The summariser reads at most this much transcript (default 12,000)."),
    tool_result_max_chars: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe("Each tool result in that transcript cut to this (default 1,024)."),
    summary_max_chars: z
      .number()
      .int()
      .min(50)
      .optional()
      .describe("A longer summary is cut at a boundary (default 2,000)."),
    timeout_ms: z.number().int().min(1).optional().describe("How long a summary may take (default 60,000)."),
  });

  const resetRule = z.strictObject({
    mode: z
      .enum(["off", "daily", "idle"])
      .describe("daily: at at_hour in timezone; idle: after idle_minutes without a message."),
    at_hour: z.number().int().min(0).max(23).optional().describe("The hour of a daily reset (default 4)."),
    timezone: z
      .string()
      .min(1)
      .optional()
      .describe("An IANA zone such as Europe/Berlin; default the host's."),
    idle_minutes: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe("Minutes without a message before an idle reset."),
  });
  const resetByType = z.strictObject({
    direct: resetRule.optional(),
    group: resetRule.optional(),
    thread: resetRule.optional(),
  });

  /** A language model endpoint, named so compaction, titles and agents can refer to it. */
  const modelSettings = z.strictObject({
    provider: z.enum(["openai", "anthropic"]).describe("openai: any OpenAI-compatible API."),
    base_url: z
      .string()
      .url()
      .optional()
      .describe(
        "OpenAI-compatible servers (Ollama, vLLM, llama.cpp, LM Studio) need it; OpenAI and Anthropic don't.",
      ),
    model: z.string().min(1).describe("The model name the endpoint takes."),
    api_key_env: z
      .string()
      .min(1)
      .optional()
      .describe("The environment variable holding the key; the key itself never goes in this file."),
    context_window: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe("Tokens the model takes: drives the window trigger."),
    timeout_ms: z.number().int().min(1).optional().describe("How long one request may take."),
    price: z
      .strictObject({
        input: z.number().nonnegative().describe("USD per million input tokens."),
        output: z.number().nonnegative().describe("USD per million output tokens."),
        cache_read: z
          .number()
          .nonnegative()
          .optional()
          .describe("USD per million tokens read from the prompt cache."),
        cache_write: z.number().nonnegative().optional().describe("USD per million tokens written to it."),
      })
      .optional()
      .describe("USD per million tokens (cache reads/writes default to input), for the cost ledger."),
  });
  return { compactionSettings, resetRule, resetByType, modelSettings };
}
