import { z } from "zod";
import { channelsSchema } from "../channels/config.js";
import { DM_SCOPES, GROUP_SCOPES, NAMED_SCOPES } from "../keys/index.js";
import { DROP_POLICIES, QUEUE_MODES } from "../model/queue.js";
import { RUNTIME_KINDS } from "../runtimes/agents.js";

/** `sessiond.yaml`, strict at every level so unknown keys can be named (then dropped with a warning). Keys follow GoClaw's (`session.identity_links`, …) so its users can bring their config. */
const compactionSettings = z.strictObject({
  enabled: z.boolean().optional(),
  max_messages: z.number().int().min(2).optional(),
  keep_recent: z.number().int().min(1).optional(),
  max_tokens: z.number().int().min(1).optional(),
  window_fraction: z.number().gt(0).max(1).optional(),
  source_max_chars: z.number().int().min(100).optional(),
  tool_result_max_chars: z.number().int().min(1).optional(),
  summary_max_chars: z.number().int().min(50).optional(),
  timeout_ms: z.number().int().min(1).optional(),
});

const resetRule = z.strictObject({
  mode: z.enum(["off", "daily", "idle"]),
  at_hour: z.number().int().min(0).max(23).optional(),
  /** An IANA zone such as Europe/Berlin; default the host's. */
  timezone: z.string().min(1).optional(),
  idle_minutes: z.number().int().min(1).optional(),
});
const resetByType = z.strictObject({
  direct: resetRule.optional(),
  group: resetRule.optional(),
  thread: resetRule.optional(),
});

/** A language model endpoint, named so compaction, titles and agents can refer to it. */
const modelSettings = z.strictObject({
  provider: z.enum(["openai", "anthropic"]),
  /** OpenAI-compatible servers (Ollama, vLLM, llama.cpp, LM Studio) need it; OpenAI and Anthropic don't. */
  base_url: z.string().url().optional(),
  model: z.string().min(1),
  /** The environment variable holding the key; the key itself never goes in this file. */
  api_key_env: z.string().min(1).optional(),
  context_window: z.number().int().min(1).optional(),
  timeout_ms: z.number().int().min(1).optional(),
});

export const configFileSchema = z.strictObject({
  data_dir: z.string().min(1).optional(),
  store: z
    .strictObject({
      backend: z.enum(["sqlite", "memory", "jsonl"]).optional(),
      /** The SQLite file, or the JSONL directory (default `sessions`); relative paths are under data_dir. */
      path: z.string().min(1).optional(),
      durability: z.enum(["strict", "relaxed"]).optional(),
      commit_interval_ms: z.number().int().min(0).max(1000).optional(),
    })
    .optional(),
  default_agent: z.string().min(1).optional(),
  agents: z
    .array(
      z.strictObject({
        id: z.string().min(1),
        /** A name from `models`: its context window drives the window trigger. */
        model: z.string().min(1).optional(),
        compaction: compactionSettings.optional(),
        instructions: z.string().optional(),
        /** strict: every entry durable before acknowledged; meaningful (ZeroClaw): user messages of 20+ characters at once, the rest at the end of the turn; relaxed. */
        durability: z.enum(["strict", "meaningful", "relaxed"]).optional(),
        /** Seconds a turn's runtime may take before it is aborted and the turn fails (default 600). */
        turn_timeout: z.number().int().min(1).max(86_400).optional(),
        /** What a message arriving while a turn runs does (README "Queue modes"). */
        queue: z
          .strictObject({
            mode: z.enum(QUEUE_MODES).optional(),
            debounce_ms: z.number().int().min(0).max(600_000).optional(),
            cap: z.number().int().min(0).max(10_000).optional(),
            drop: z.enum(DROP_POLICIES).optional(),
          })
          .optional(),
        /** model (default when `model` is set), echo, claude-code, codex, a2a. For claude-code and codex, `model` is the runtime's own model name. */
        runtime: z.enum(RUNTIME_KINDS).optional(),
        /** The agent's working directory (claude-code, codex); relative to this file. Changing it clears its runtime sessions. */
        cwd: z.string().min(1).optional(),
        /** The claude / codex executable; default the SDK's own. */
        executable: z.string().min(1).optional(),
        /** a2a: the remote agent's base URL. */
        url: z.string().url().optional(),
      }),
    )
    .optional(),
  models: z.record(z.string(), modelSettings).optional(),
  /** Chat platforms the gateway takes messages from and answers on (`sessiond serve`). */
  channels: channelsSchema.optional(),
  /** Sender ids of human admins: only their conversations get the agent tools that read other sessions. */
  admins: z.array(z.string().min(1)).optional(),
  compaction: compactionSettings
    .extend({
      /** A name from `models`; without it, the offline extractive summariser. */
      model: z.string().min(1).optional(),
    })
    .optional(),
  titles: z
    .strictObject({
      enabled: z.boolean().optional(),
      /** A name from `models`; without it, titles are picked offline from the first message. */
      model: z.string().min(1).optional(),
    })
    .optional(),
  session: z
    .strictObject({
      scope: z.enum(NAMED_SCOPES).optional(),
      dm_scope: z.enum(DM_SCOPES).optional(),
      group_scope: z.enum(GROUP_SCOPES).optional(),
      group_scope_by_channel: z.record(z.string(), z.enum(GROUP_SCOPES)).optional(),
      identity_links: z.record(z.string(), z.array(z.string().min(1))).optional(),
      max_queued_turns: z.number().int().min(0).max(10_000).optional(),
      /** Case-insensitive; `/new@bot` counts; the text after the trigger starts the new session. */
      reset_triggers: z.array(z.string().min(1).regex(/^\S+$/)).optional(),
      reset: resetRule.extend({ keep_archive: z.boolean().optional() }).optional(),
      reset_by_type: resetByType.optional(),
      reset_by_channel: z.record(z.string(), z.union([resetRule, resetByType])).optional(),
      retention: z
        .strictObject({
          webhook_idle_days: z.number().min(0).optional(),
          archived_days: z.number().min(0).optional(),
        })
        .optional(),
      /** How often due resets and retention are swept; 0 turns the sweep off. */
      sweep_interval_seconds: z.number().int().min(0).optional(),
    })
    .optional(),
});

export type ConfigFile = z.infer<typeof configFileSchema>;
export type CompactionSettings = z.infer<typeof compactionSettings>;
export type ModelSettings = z.infer<typeof modelSettings>;
export type ResetRuleSettings = z.infer<typeof resetRule>;
export type ResetByTypeSettings = z.infer<typeof resetByType>;

/** Keys that once existed and are read by nothing now: named in a warning, never silently ignored. */
export const RETIRED_KEYS: Record<string, string> = {
  "session.maintenance":
    "session.maintenance was never read and has been removed; sessions are not pruned by age",
};
