import type { ChannelsConfig } from "../channels/config.js";
import type { CompactionPolicy } from "../compaction/policy.js";
import type { IncognitoRule } from "../incognito/rules.js";
import type { RoutingConfig } from "../keys/index.js";
import type { ModelPrice } from "../ledger/price.js";
import type { Clock, OneShotTimer } from "../lifecycle/clock.js";
import type { ResetPolicy } from "../lifecycle/reset-policy.js";
import type { RetentionPolicy } from "../lifecycle/retention.js";
import type { Inbox } from "../model/inbox.js";
import type { QueueSettings } from "../model/queue.js";
import type { Summarizer } from "../model/summarizer.js";
import type { ModelEndpoint, TextModel } from "../model/text-model.js";
import type { AgentRuntimeSettings } from "../runtimes/agents.js";
import type { RuntimeSessionStore } from "../runtimes/sessions/store.js";
import type { StoreConfig } from "../store/open.js";
import type { Store } from "../store/store.js";

/** What `createEngine` takes. Everything is optional; `loadConfig` builds one from `sessiond.yaml`. */
export interface EngineConfig {
  /** Where data lives; default `./.sessiond`. */
  dataDir?: string;
  /** A backend to open (default: SQLite at `<dataDir>/sessiond.db`), or an opened store. */
  store?: StoreConfig | Store;
  /** Agent ids; default `["main"]`. With more than one, chat keys start with the agent id. */
  agents?: string[];
  defaultAgent?: string;
  routing?: Partial<Omit<RoutingConfig, "agents" | "defaultAgent">>;
  /** Turns that may wait behind the running one on a session (the default `queue.cap`); default 20. */
  maxQueuedTurns?: number;
  /** Queue mode, debounce, cap and drop policy of every agent that sets none (`agentOptions.*.queue`). */
  queue?: Partial<QueueSettings>;
  /** Named language models: endpoints to build, or models already built. */
  models?: Record<string, ModelConfig | TextModel>;
  /** Thresholds and limits; `model` names the summariser's model, else the offline summariser is used. */
  compaction?: Partial<CompactionPolicy> & { model?: string; summarizer?: Summarizer };
  /** Titles after the first exchange: by `model`, else offline. On by default. */
  titles?: { enabled?: boolean; model?: string };
  /** Per-agent settings: the agent's model (for its context window) and compaction overrides. */
  agentOptions?: Record<string, AgentOptions>;
  /** Resets (by command and schedule), retention and the sweep that applies them. */
  lifecycle?: LifecycleConfig;
  /** Sender ids of human admins: the gateway offers the session-reading agent tools only to them. */
  admins?: string[];
  /** Chat platforms `sessiond serve` takes messages from (`channels:` in sessiond.yaml); the engine ignores it. */
  channels?: ChannelsConfig;
  /** Where runtime sessions, cost and needs-attention marks live; default beside the store (SQLite file, PostgreSQL database or memory). */
  runtimeSessions?: RuntimeSessionStore;
  /** Durable admission, recovery at start-up, results of asynchronous turns, stuck turns. */
  turns?: TurnsConfig;
  /** Sessions kept in memory only (README "Incognito sessions"): by rule, and how much they may hold. */
  incognito?: IncognitoConfig;
}

export interface IncognitoConfig {
  /** Keys whose sessions are always incognito (`session.incognito_for`). */
  for?: IncognitoRule[];
  /** Incognito keys one process holds at most; default 10,000. */
  maxKeys?: number;
  /** Bytes their entries may take in memory; default 64 MiB. */
  maxBytes?: number;
}

export interface TurnsConfig {
  /**
   * Where an agent turn's input is stored before it is acknowledged: default the store's own (a table of
   * the SQLite file, `inbox.jsonl` of a JSONL store, the PostgreSQL table; in memory for a memory store or
   * a store passed in); an inbox of your own; or false for none.
   */
  inbox?: Inbox | false;
  /** `engine.recover()` marks inputs pending longer than this `interrupted` instead of running them; default 10 minutes. */
  recoverMaxAgeMs?: number;
  /** A running turn with no runtime event for this long is reported stuck; default 2 minutes. */
  stuckAfterMs?: number;
  /** Bytes of finished turns' results kept for `engine.turnStatus`; default 8 MiB. */
  resultsMaxBytes?: number;
}

export interface LifecycleConfig {
  /** Default `/new` and `/reset`; case-insensitive, `/new@bot` counts. */
  resetTriggers?: string[];
  /** Scheduled resets (daily or idle), per chat type and channel; off by default. */
  reset?: ResetPolicy;
  /** false: a reset deletes the old session instead of archiving it. Default true. */
  keepArchive?: boolean;
  /** Default: single-event webhook sessions go after 7 idle days; archived generations are kept. */
  retention?: RetentionPolicy;
  /** How often the sweep runs; 0 turns it off. Default 60,000 ms. */
  sweepIntervalMs?: number;
  /** The time source for resets and retention (tests inject one). */
  clock?: Clock;
  /** Where a queue's debounce is scheduled; default real timers (tests pass their `ManualClock`). */
  timer?: OneShotTimer;
}

/** A named model endpoint in the config; keys come from `apiKeyEnv`, never the file. */
export interface ModelConfig extends Omit<ModelEndpoint, "apiKey"> {
  provider: "openai" | "anthropic";
  /** USD per million tokens, for the cost ledger; absent: its calls' price is unknown. */
  price?: ModelPrice;
}

export type AgentDurability = "strict" | "meaningful" | "relaxed";

export interface AgentOptions extends Omit<AgentRuntimeSettings, "model" | "instructions"> {
  model?: string;
  compaction?: Partial<CompactionPolicy>;
  /** The system message of every turn. */
  instructions?: string;
  /**
   * `strict` (default): every entry durable before it is acknowledged. `meaningful` (ZeroClaw): a user
   * message of at least 20 characters is durable at once, shorter ones when the turn's reply is stored.
   * `relaxed`: durable at the store's next sync or checkpoint.
   */
  durability?: AgentDurability;
  /** How long a turn's runtime may run before it is aborted and the turn fails; default 10 minutes. */
  turnTimeoutMs?: number;
  /** What a message arriving while this agent's turn runs does; overridable per session (`queue.mode`, `/queue`). */
  queue?: Partial<QueueSettings>;
}
