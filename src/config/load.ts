import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { isAbsolute, resolve } from "node:path";
import type * as Yaml from "yaml";
import type { z } from "zod";
import { resolveChannelFiles } from "../channels/config.js";
import type { CompactionPolicy } from "../compaction/policy.js";
import { resetPolicyFromSettings } from "../lifecycle/reset-policy.js";
import { DEFAULT_RETENTION } from "../lifecycle/retention.js";
import { validateResetTriggers } from "../lifecycle/triggers.js";
import { isSessiondError, SessiondError } from "../model/errors.js";
import { storeKey } from "../store/encryption/store-key.js";
import type { StoreConfig } from "../store/open.js";
import type { EngineConfig, LifecycleConfig, ModelConfig } from "./engine-config.js";
import { withLines } from "./lines.js";
import {
  type ConfigProblem,
  duplicateAgentProblems,
  lifecycleProblems,
  modelReferenceProblems,
} from "./references.js";
import { type CompactionSettings, type ConfigFile, configFileSchema, RETIRED_KEYS } from "./schema.js";

export const CONFIG_FILE_NAMES = ["sessiond.yaml", "sessiond.yml"];

// yaml (74 modules) is loaded only when there is a file to read, not by every import of sessiond.
const require = createRequire(import.meta.url);
const parseYaml = (text: string): unknown => (require("yaml") as typeof Yaml).parse(text);

export interface LoadedConfig {
  config: EngineConfig & { dataDir: string };
  /** The file read, if any. */
  file?: string;
  /** Unknown or retired keys, each naming its path. */
  warnings: string[];
  /** `store.fallback`: whether `sessiond serve` may run on the memory store when this one cannot open. */
  storeFallback: boolean;
}

export interface LoadOptions {
  /** An explicit config file; else SESSIOND_CONFIG, else sessiond.yaml in `cwd` if present. */
  file?: string;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
}

/** Reads `sessiond.yaml` and `SESSIOND_*` variables (which win) into an engine config. */
export function loadConfig(options: LoadOptions = {}): LoadedConfig {
  const cwd = options.cwd ?? process.cwd();
  const env = options.env ?? process.env;
  const file = findFile(options.file ?? env.SESSIOND_CONFIG, cwd);
  const raw = file ? readYaml(file) : {};
  const warnings: string[] = [];
  // Without a file there is nothing to check, and zod need not load.
  const data = file ? checkedFile(raw, warnings, file) : {};
  applyEnv(data, env);
  const baseDir = file ? resolve(file, "..") : cwd;
  let config: EngineConfig & { dataDir: string };
  try {
    config = toEngineConfig(data, baseDir, env);
  } catch (error) {
    if (!isSessiondError(error, "INVALID_ARGUMENT")) throw error;
    throw new SessiondError("CONFIG_INVALID", `${file ?? "config"}: ${error.message}`, { cause: error });
  }
  return { config, ...(file ? { file } : {}), warnings, storeFallback: data.store?.fallback ?? true };
}

/** The file's config, or CONFIG_INVALID naming every problem at once: the schema's, then what it cannot see (model names, zones, triggers). */
function checkedFile(raw: unknown, warnings: string[], source: string): ConfigFile {
  const parsed = parseWithWarnings(raw, warnings, source);
  const problems = [
    ...(parsed.ok ? [] : parsed.problems),
    ...modelReferenceProblems(raw),
    ...duplicateAgentProblems(raw),
    ...(parsed.ok ? lifecycleProblems(parsed.data) : []),
  ];
  if (problems.length > 0) {
    const lines = problems.map((p) => `  ${p.path}: ${p.message}`).join("\n");
    throw new SessiondError("CONFIG_INVALID", `${source} is not valid:\n${lines}`, {
      details: { problems: withLines(readFileSync(source, "utf8"), problems) },
    });
  }
  if (!parsed.ok) throw new SessiondError("CONFIG_INVALID", `${source} could not be read`);
  return parsed.data;
}

function findFile(explicit: string | undefined, cwd: string): string | undefined {
  if (explicit) {
    const path = resolve(cwd, explicit);
    if (!existsSync(path)) throw new SessiondError("CONFIG_INVALID", `config file not found: ${path}`);
    return path;
  }
  return CONFIG_FILE_NAMES.map((name) => resolve(cwd, name)).find((path) => existsSync(path));
}

function readYaml(file: string): unknown {
  try {
    return parseYaml(readFileSync(file, "utf8")) ?? {};
  } catch (error) {
    throw new SessiondError("CONFIG_INVALID", `${file}: not valid YAML: ${(error as Error).message}`, {
      cause: error,
    });
  }
}

type Parsed = { ok: true; data: ConfigFile } | { ok: false; problems: ConfigProblem[] };

/**
 * Validates against the schema. Unknown keys are warned about with their path and dropped; every other
 * issue zod finds is a problem naming its path.
 */
function parseWithWarnings(raw: unknown, warnings: string[], source: string): Parsed {
  const input = structuredClone(raw);
  for (const [path, message] of Object.entries(RETIRED_KEYS)) {
    if (removeAt(input, path.split("."))) warnings.push(`${source}: ${message}`);
  }
  for (let attempt = 0; attempt < 100; attempt++) {
    const result = configFileSchema().safeParse(input);
    if (result.success) return { ok: true, data: result.data };
    const unknown = result.error.issues.filter((i) => i.code === "unrecognized_keys");
    const other = result.error.issues.filter((i) => i.code !== "unrecognized_keys");
    if (other.length > 0) {
      return { ok: false, problems: other.map((i) => ({ path: pathOf(i.path), message: i.message })) };
    }
    for (const issue of unknown as z.core.$ZodIssueUnrecognizedKeys[]) {
      for (const key of issue.keys) {
        warnings.push(`${source}: unknown key ${pathOf([...issue.path, key])} (ignored)`);
        removeAt(input, [...issue.path.map(String), key]);
      }
    }
  }
  return { ok: false, problems: [] };
}

function pathOf(path: readonly PropertyKey[]): string {
  return path.length === 0 ? "(top level)" : path.map(String).join(".");
}

function removeAt(target: unknown, path: string[]): boolean {
  let node = target;
  for (const part of path.slice(0, -1)) {
    if (typeof node !== "object" || node === null) return false;
    node = (node as Record<string, unknown>)[part];
  }
  const last = path.at(-1);
  if (typeof node !== "object" || node === null || last === undefined || !(last in node)) return false;
  delete (node as Record<string, unknown>)[last];
  return true;
}

function applyEnv(config: ConfigFile, env: NodeJS.ProcessEnv): void {
  if (env.SESSIOND_DATA_DIR) config.data_dir = env.SESSIOND_DATA_DIR;
  config.store ??= {};
  const store = config.store;
  const backend = env.SESSIOND_STORE;
  if (backend) {
    if (backend !== "sqlite" && backend !== "memory" && backend !== "jsonl" && backend !== "postgres") {
      throw new SessiondError(
        "CONFIG_INVALID",
        `SESSIOND_STORE must be sqlite, memory, jsonl or postgres, not ${JSON.stringify(backend)}`,
      );
    }
    store.backend = backend;
  }
  if (env.SESSIOND_DB_PATH) store.path = env.SESSIOND_DB_PATH;
  if (env.SESSIOND_DATABASE_URL) store.url = env.SESSIOND_DATABASE_URL;
  const durability = env.SESSIOND_DURABILITY;
  if (durability) {
    if (durability !== "strict" && durability !== "relaxed") {
      throw new SessiondError(
        "CONFIG_INVALID",
        `SESSIOND_DURABILITY must be strict or relaxed, not ${durability}`,
      );
    }
    store.durability = durability;
  }
}

function lifecycleFrom(s: NonNullable<ConfigFile["session"]>): LifecycleConfig {
  const { keep_archive, ...reset } = s.reset ?? { mode: "off" as const };
  const lifecycle: LifecycleConfig = {
    reset: resetPolicyFromSettings({
      ...(s.reset ? { reset } : {}),
      reset_by_type: s.reset_by_type,
      reset_by_channel: s.reset_by_channel,
    }),
  };
  if (s.reset_triggers) {
    validateResetTriggers(s.reset_triggers);
    lifecycle.resetTriggers = s.reset_triggers;
  }
  if (keep_archive !== undefined) lifecycle.keepArchive = keep_archive;
  if (s.retention) {
    lifecycle.retention = {
      webhookIdleDays: s.retention.webhook_idle_days ?? DEFAULT_RETENTION.webhookIdleDays,
      ...(s.retention.archived_days !== undefined
        ? { archivedRetentionDays: s.retention.archived_days }
        : {}),
    };
  }
  if (s.sweep_interval_seconds !== undefined) lifecycle.sweepIntervalMs = s.sweep_interval_seconds * 1000;
  return lifecycle;
}

function compactionFrom(settings: CompactionSettings): Partial<CompactionPolicy> {
  const names: Record<keyof CompactionSettings, keyof CompactionPolicy> = {
    enabled: "enabled",
    max_messages: "maxMessages",
    keep_recent: "keepRecent",
    max_tokens: "maxTokens",
    window_fraction: "windowFraction",
    source_max_chars: "sourceMaxChars",
    tool_result_max_chars: "toolResultMaxChars",
    summary_max_chars: "summaryMaxChars",
    timeout_ms: "timeoutMs",
  };
  const policy: Record<string, unknown> = {};
  for (const [from, to] of Object.entries(names)) {
    const value = settings[from as keyof CompactionSettings];
    if (value !== undefined) policy[to] = value;
  }
  return policy as Partial<CompactionPolicy>;
}

function postgresStore(store: NonNullable<ConfigFile["store"]>): StoreConfig {
  if (!store.url) {
    throw new SessiondError(
      "CONFIG_INVALID",
      "store.backend postgres needs the server's URL: store.url or SESSIOND_DATABASE_URL",
    );
  }
  return {
    backend: "postgres",
    url: store.url,
    ...(store.durability ? { durability: store.durability } : {}),
    ...(store.lease_ttl_ms !== undefined ? { leaseTtlMs: store.lease_ttl_ms } : {}),
  };
}

function toEngineConfig(
  file: ConfigFile,
  baseDir: string,
  env: NodeJS.ProcessEnv,
): EngineConfig & { dataDir: string } {
  const dataDir = resolve(baseDir, file.data_dir ?? ".sessiond");
  const config: EngineConfig & { dataDir: string } = { dataDir };
  const store = file.store ?? {};
  if (store.backend === "memory") config.store = { backend: "memory" };
  else if (store.backend === "postgres") config.store = postgresStore(store);
  else if (store.backend === "jsonl") {
    const path = store.path ?? "sessions";
    config.store = {
      backend: "jsonl",
      path: isAbsolute(path) ? path : resolve(dataDir, path),
      ...(store.durability ? { durability: store.durability } : {}),
      ...(store.commit_interval_ms !== undefined ? { commitIntervalMs: store.commit_interval_ms } : {}),
    };
  } else {
    const path = store.path ?? "sessiond.db";
    config.store = {
      backend: "sqlite",
      path: isAbsolute(path) ? path : resolve(dataDir, path),
      ...(store.durability ? { durability: store.durability } : {}),
      ...(store.commit_interval_ms !== undefined ? { commitIntervalMs: store.commit_interval_ms } : {}),
    };
  }
  if (store.encryption) {
    if (config.store.backend === "memory")
      throw new SessiondError(
        "CONFIG_INVALID",
        "store.encryption needs a store on disk: sqlite, jsonl or postgres",
      );
    config.store = { ...config.store, encryption: { key: storeKey(store.encryption.key_env, env) } };
  }
  if (file.agents) {
    config.agents = file.agents.map((a) => a.id);
    config.agentOptions = Object.fromEntries(
      file.agents.map((a) => [
        a.id,
        {
          ...(a.model ? { model: a.model } : {}),
          ...(a.compaction ? { compaction: compactionFrom(a.compaction) } : {}),
          ...(a.instructions !== undefined ? { instructions: a.instructions } : {}),
          ...(a.durability ? { durability: a.durability } : {}),
          ...(a.turn_timeout ? { turnTimeoutMs: a.turn_timeout * 1000 } : {}),
          ...(a.queue
            ? {
                queue: {
                  ...(a.queue.mode ? { mode: a.queue.mode } : {}),
                  ...(a.queue.debounce_ms !== undefined ? { debounceMs: a.queue.debounce_ms } : {}),
                  ...(a.queue.cap !== undefined ? { cap: a.queue.cap } : {}),
                  ...(a.queue.drop ? { drop: a.queue.drop } : {}),
                },
              }
            : {}),
          ...(a.runtime ? { runtime: a.runtime } : {}),
          ...(a.cwd ? { cwd: resolve(baseDir, a.cwd) } : {}),
          ...(a.executable
            ? { executable: a.executable.includes("/") ? resolve(baseDir, a.executable) : a.executable }
            : {}),
          ...(a.url ? { url: a.url } : {}),
          ...(a.permission ? { permission: a.permission } : {}),
          ...(a.self_compact !== undefined ? { selfCompact: a.self_compact ? "on" : "off" } : {}),
          ...(a.self_compact_window ? { selfCompactWindow: a.self_compact_window } : {}),
        },
      ]),
    );
  }
  if (file.admins) config.admins = [...file.admins];
  if (file.channels) config.channels = resolveChannelFiles(file.channels, baseDir);
  if (file.models) {
    config.models = Object.fromEntries(
      Object.entries(file.models).map(([name, m]): [string, ModelConfig] => [
        name,
        {
          provider: m.provider,
          model: m.model,
          ...(m.base_url ? { baseUrl: m.base_url } : {}),
          ...(m.api_key_env ? { apiKeyEnv: m.api_key_env } : {}),
          ...(m.context_window ? { contextWindow: m.context_window } : {}),
          ...(m.timeout_ms ? { timeoutMs: m.timeout_ms } : {}),
          ...(m.price ? { price: priceFrom(m.price) } : {}),
        },
      ]),
    );
  }
  if (file.compaction) {
    const { model, ...settings } = file.compaction;
    config.compaction = { ...compactionFrom(settings), ...(model ? { model } : {}) };
  }
  if (file.titles) {
    config.titles = {
      ...(file.titles.enabled !== undefined ? { enabled: file.titles.enabled } : {}),
      ...(file.titles.model ? { model: file.titles.model } : {}),
    };
  }
  if (file.turns) {
    const t = file.turns;
    config.turns = {
      ...(t.inbox === false ? { inbox: false as const } : {}),
      ...(t.recover_max_age !== undefined ? { recoverMaxAgeMs: t.recover_max_age * 1000 } : {}),
      ...(t.stuck_after !== undefined ? { stuckAfterMs: t.stuck_after * 1000 } : {}),
      ...(t.results_max_bytes !== undefined ? { resultsMaxBytes: t.results_max_bytes } : {}),
    };
  }
  if (file.default_agent) config.defaultAgent = file.default_agent;
  const s = file.session ?? {};
  config.routing = {
    ...(s.scope ? { scope: s.scope } : {}),
    ...(s.dm_scope ? { dmScope: s.dm_scope } : {}),
    ...(s.group_scope ? { groupScope: s.group_scope } : {}),
    ...(s.group_scope_by_channel ? { groupScopeByChannel: s.group_scope_by_channel } : {}),
    ...(s.identity_links ? { identityLinks: s.identity_links } : {}),
  };
  if (s.max_queued_turns !== undefined) config.maxQueuedTurns = s.max_queued_turns;
  if (s.incognito_for || s.incognito_max_keys !== undefined || s.incognito_max_bytes !== undefined) {
    config.incognito = {
      ...(s.incognito_for
        ? { for: s.incognito_for.map((rule) => (typeof rule === "string" ? { key: rule } : rule)) }
        : {}),
      ...(s.incognito_max_keys !== undefined ? { maxKeys: s.incognito_max_keys } : {}),
      ...(s.incognito_max_bytes !== undefined ? { maxBytes: s.incognito_max_bytes } : {}),
    };
  }
  config.lifecycle = lifecycleFrom(s);
  return config;
}

/** A model's `price` (snake_case in the file) as the ledger takes it. */
function priceFrom(p: { input: number; output: number; cache_read?: number; cache_write?: number }) {
  return {
    input: p.input,
    output: p.output,
    ...(p.cache_read !== undefined ? { cacheRead: p.cache_read } : {}),
    ...(p.cache_write !== undefined ? { cacheWrite: p.cache_write } : {}),
  };
}
