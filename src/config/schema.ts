import type * as Zod from "zod";
import type { z } from "zod";
import { buildChannelsSchema } from "../channels/config.js";
import { DM_SCOPES, GROUP_SCOPES, NAMED_SCOPES } from "../keys/index.js";
import { DROP_POLICIES, QUEUE_MODES } from "../model/queue.js";
import { lazySchema } from "../model/zod.js";
import { PERMISSION_MODES, RUNTIME_KINDS } from "../runtimes/agents.js";
import { buildPartSchemas } from "./schema-parts.js";

function buildSchemas(z: typeof Zod.z) {
  const { compactionSettings, resetRule, resetByType, modelSettings } = buildPartSchemas(z);

  /** `sessiond.yaml`, strict at every level so unknown keys can be named (then dropped with a warning). Keys follow GoClaw's (`session.identity_links`, …) so its users can bring their config. */
  const configFile = z.strictObject({
    data_dir: z
      .string()
      .min(1)
      .optional()
      .describe("Where data lives (default .sessiond); relative to this file."),
    store: z
      .strictObject({
        backend: z
          .enum(["sqlite", "memory", "jsonl", "postgres"])
          .optional()
          .describe(
            "sqlite (default); memory loses everything on exit; jsonl: CrabTalk's files; postgres: several gateways on one database.",
          ),
        url: z
          .string()
          .min(1)
          .optional()
          .describe("postgres: the server's URL (prefer SESSIOND_DATABASE_URL for one with a password)."),
        lease_ttl_ms: z
          .number()
          .int()
          .min(100)
          .max(3_600_000)
          .optional()
          .describe(
            "postgres: how long a turn's lease on its key lasts unrenewed (a crashed process's lapses after it).",
          ),
        path: z
          .string()
          .min(1)
          .optional()
          .describe(
            "The SQLite file, or the JSONL directory (default `sessions`); relative paths are under data_dir.",
          ),
        durability: z
          .enum(["strict", "relaxed"])
          .optional()
          .describe("strict (default): acknowledged means on disk; relaxed: WAL with synchronous=NORMAL."),
        commit_interval_ms: z
          .number()
          .int()
          .min(0)
          .max(1000)
          .optional()
          .describe("0 (default): commit every event-loop turn; more: wait to gather bigger batches."),
        fallback: z
          .boolean()
          .optional()
          .describe(
            "`sessiond serve` only: run on the memory store, loudly, when this one cannot be opened (default true).",
          ),
        encryption: z
          .strictObject({
            key_env: z
              .string()
              .regex(/^[A-Za-z_][A-Za-z0-9_]*$/)
              .describe("The environment variable holding the store key: 32 bytes in base64."),
          })
          .optional()
          .describe(
            "Encryption at rest: entry bodies, titles and inbox rows sealed (sqlite, jsonl, postgres).",
          ),
      })
      .optional(),
    default_agent: z
      .string()
      .min(1)
      .optional()
      .describe("The agent messages go to when nothing names one (default main)."),
    agents: z
      .array(
        z.strictObject({
          id: z
            .string()
            .min(1)
            .describe("The agent's name; with more than one agent, chat keys start with it."),
          model: z
            .string()
            .min(1)
            .optional()
            .describe("A name from `models`: its context window drives the window trigger."),
          compaction: compactionSettings.optional(),
          instructions: z.string().optional().describe("The system message of the agent's turns."),
          durability: z
            .enum(["strict", "meaningful", "relaxed"])
            .optional()
            .describe(
              "strict: every entry durable before acknowledged; meaningful (ZeroClaw): user messages of 20+ characters at once, the rest at the end of the turn; relaxed.",
            ),
          turn_timeout: z
            .number()
            .int()
            .min(1)
            .max(86_400)
            .optional()
            .describe(
              "Seconds a turn's runtime may take before it is aborted and the turn fails (default 600).",
            ),
          queue: z
            .strictObject({
              mode: z.enum(QUEUE_MODES).optional(),
              debounce_ms: z.number().int().min(0).max(600_000).optional(),
              cap: z.number().int().min(0).max(10_000).optional(),
              drop: z.enum(DROP_POLICIES).optional(),
            })
            .optional()
            .describe('What a message arriving while a turn runs does (README "Queue modes").'),
          runtime: z
            .enum(RUNTIME_KINDS)
            .optional()
            .describe(
              "model (default when `model` is set), echo, claude-code, codex, a2a. For claude-code and codex, `model` is the runtime's own model name.",
            ),
          cwd: z
            .string()
            .min(1)
            .optional()
            .describe(
              "The agent's working directory (claude-code, codex); relative to this file. Changing it clears its runtime sessions.",
            ),
          executable: z
            .string()
            .min(1)
            .optional()
            .describe("The claude / codex executable; default the SDK's own."),
          url: z.string().url().optional().describe("a2a: the remote agent's base URL."),
          permission: z
            .enum(PERMISSION_MODES)
            .optional()
            .describe(
              "claude-code, codex: ask-first (default: asks before writing) or auto (writes without asking).",
            ),
          self_compact: z
            .boolean()
            .optional()
            .describe(
              'claude-code: "Let it compact its own history" (its own auto-compaction; default the CLI\'s).',
            ),
          self_compact_window: z
            .number()
            .int()
            .min(100_000)
            .optional()
            .describe("claude-code: the token count at which it compacts its own history."),
        }),
      )
      .optional(),
    models: z.record(z.string(), modelSettings).optional(),
    channels: buildChannelsSchema(z)
      .optional()
      .describe("Chat platforms the gateway takes messages from and answers on (`sessiond serve`)."),
    admins: z
      .array(z.string().min(1))
      .optional()
      .describe(
        "Sender ids of human admins: only their conversations get the agent tools that read other sessions.",
      ),
    compaction: compactionSettings
      .extend({
        model: z
          .string()
          .min(1)
          .optional()
          .describe("A name from `models`; without it, the offline extractive summariser."),
      })
      .optional(),
    titles: z
      .strictObject({
        enabled: z.boolean().optional().describe("false: no titles (default true)."),
        model: z
          .string()
          .min(1)
          .optional()
          .describe("A name from `models`; without it, titles are picked offline from the first message."),
      })
      .optional(),
    turns: z
      .strictObject({
        inbox: z
          .boolean()
          .optional()
          .describe("false: inputs are not stored before they run (default true: durable admission)."),
        recover_max_age: z
          .number()
          .min(0)
          .optional()
          .describe(
            "Seconds: an input left pending longer than this at start-up is marked interrupted, not run (default 600).",
          ),
        stuck_after: z
          .number()
          .positive()
          .optional()
          .describe(
            "Seconds without a runtime event after which a running turn is reported stuck (default 120).",
          ),
        results_max_bytes: z
          .number()
          .int()
          .min(0)
          .optional()
          .describe("Memory for finished turns' results (`GET /api/turns/{id}`), in bytes (default 8 MiB)."),
      })
      .optional(),
    session: z
      .strictObject({
        scope: z
          .enum(NAMED_SCOPES)
          .optional()
          .describe("A peer's key grouping in one word; overrides dm_scope and group_scope."),
        dm_scope: z
          .enum(DM_SCOPES)
          .optional()
          .describe("How direct messages map to keys (default per-channel-peer)."),
        group_scope: z
          .enum(GROUP_SCOPES)
          .optional()
          .describe("How group chats map to keys (default per-group; Discord guilds per sender)."),
        group_scope_by_channel: z
          .record(z.string(), z.enum(GROUP_SCOPES))
          .optional()
          .describe("group_scope per channel."),
        identity_links: z
          .record(z.string(), z.array(z.string().min(1)))
          .optional()
          .describe("One person's accounts (channel:id): all use the first one's key."),
        max_queued_turns: z
          .number()
          .int()
          .min(0)
          .max(10_000)
          .optional()
          .describe("Turns that may wait behind the running one on a session (default 16)."),
        reset_triggers: z
          .array(z.string().min(1).regex(/^\S+$/))
          .optional()
          .describe(
            "Case-insensitive; `/new@bot` counts; the text after the trigger starts the new session.",
          ),
        reset: resetRule
          .extend({
            keep_archive: z
              .boolean()
              .optional()
              .describe("false: a reset deletes the old session instead of archiving it."),
          })
          .optional()
          .describe("Scheduled resets (off by default)."),
        reset_by_type: resetByType.optional(),
        reset_by_channel: z.record(z.string(), z.union([resetRule, resetByType])).optional(),
        retention: z
          .strictObject({
            webhook_idle_days: z
              .number()
              .min(0)
              .optional()
              .describe("Single-event webhook sessions go after this many idle days (default 7)."),
            archived_days: z
              .number()
              .min(0)
              .optional()
              .describe("Archived generations go after this many days (default: kept)."),
          })
          .optional(),
        sweep_interval_seconds: z
          .number()
          .int()
          .min(0)
          .optional()
          .describe("How often due resets and retention are swept; 0 turns the sweep off."),
        incognito_for: z
          .array(
            z.union([
              z.string().min(1),
              z
                .strictObject({
                  key: z.string().min(1).optional(),
                  channel: z.string().min(1).optional(),
                  agent: z.string().min(1).optional(),
                })
                .refine((r) => r.key !== undefined || r.channel !== undefined || r.agent !== undefined, {
                  message: "a rule names a key pattern, a channel or an agent",
                }),
            ]),
          )
          .optional()
          .describe(
            "Sessions kept in memory only: a key pattern (`*` any run of characters), or `{key, channel, agent}` (all given must match; channel and agent as read from the key).",
          ),
        incognito_max_keys: z
          .number()
          .int()
          .min(1)
          .optional()
          .describe("Incognito sessions one process holds at most (default 10,000)."),
        incognito_max_bytes: z
          .number()
          .int()
          .min(1024)
          .optional()
          .describe("Memory the incognito sessions' entries may take, in bytes (default 64 MiB)."),
      })
      .optional(),
  });
  return { configFile, compactionSettings, modelSettings, resetRule, resetByType };
}

type Schemas = ReturnType<typeof buildSchemas>;

/** Built on first use: a command run without a config file never loads zod. */
const schemas = lazySchema(buildSchemas);

export const configFileSchema = (): Schemas["configFile"] => schemas().configFile;

export type ConfigFile = z.infer<Schemas["configFile"]>;
export type CompactionSettings = z.infer<Schemas["compactionSettings"]>;
export type ModelSettings = z.infer<Schemas["modelSettings"]>;
export type ResetRuleSettings = z.infer<Schemas["resetRule"]>;
export type ResetByTypeSettings = z.infer<Schemas["resetByType"]>;

/** Keys that once existed and are read by nothing now: named in a warning, never silently ignored. */
export const RETIRED_KEYS: Record<string, string> = {
  "session.maintenance":
    "session.maintenance was never read and has been removed; sessions are not pruned by age",
};
