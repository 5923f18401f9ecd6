import { dirname, join } from "node:path";
import type { EngineConfig } from "../../config/engine-config.js";
import { systemClock } from "../../lifecycle/clock.js";
import { META_DIR as JSONL_META_DIR } from "../../store/jsonl/meta-dir.js";
import type { Store } from "../../store/store.js";
import { type AgentRuntimeSettings, AgentSettingsFile, type RuntimeKind } from "../agents.js";
import { AgentRuntimes, type NoteWriter } from "./agent-runtimes.js";
import { MemoryRuntimeSessionStore } from "./memory.js";
import { SqliteRuntimeSessionStore } from "./sqlite.js";
import type { RuntimeSessionStore } from "./store.js";
import { WORK_SESSIONS_FILE, WorkSessions } from "./work-sessions.js";

export const RUNTIME_SESSIONS_FILE = "runtime-sessions.db";
export const AGENTS_FILE = "agents.json";

function runtimeDir(config: EngineConfig): string | undefined {
  const store = config.store;
  if (store === undefined) return config.dataDir ?? ".sessiond";
  if ("append" in store) return undefined;
  if (store.backend === "sqlite") return store.path === ":memory:" ? undefined : dirname(store.path);
  if (store.backend === "jsonl") return join(store.path, JSONL_META_DIR);
  return undefined;
}

/** `model` agents (and agents that name no runtime) take `model` from the config's `models`. */
export function usesModelEndpoint(runtime: RuntimeKind | undefined): boolean {
  return runtime === undefined || runtime === "model";
}

/**
 * Where runtime sessions and agents.json live: beside the SQLite store file (the data directory); in the
 * JSONL directory's `.sessiond` folder (so a CrabTalk directory holds only session files), as the same
 * SQLite file; else in memory (a memory store, or a store object given by the caller). Runtime sessions of
 * a PostgreSQL store are in its database, shared by every gateway on it. Returns the agents agents.json adds.
 */
export function openAgentRuntimes(config: EngineConfig): {
  added: string[];
  build(note: NoteWriter, store: Store): Promise<AgentRuntimes>;
} {
  const dir = runtimeDir(config);
  const base: Record<string, AgentRuntimeSettings> = {};
  for (const agent of config.agents ?? [config.defaultAgent ?? "main"]) {
    const options = config.agentOptions?.[agent] ?? {};
    const { compaction: _c, durability: _d, queue: _q, ...settings } = options;
    base[agent] = settings;
  }
  const settings = new AgentSettingsFile(dir === undefined ? undefined : join(dir, AGENTS_FILE), base);
  const added = settings.names().filter((name) => !(name in base));
  return {
    added,
    async build(note, store) {
      const sessions: RuntimeSessionStore =
        config.runtimeSessions ??
        (await sharedRuntimeSessions(store)) ??
        (dir === undefined
          ? new MemoryRuntimeSessionStore()
          : new SqliteRuntimeSessionStore(join(dir, RUNTIME_SESSIONS_FILE)));
      const work = new WorkSessions(
        dir === undefined ? undefined : join(dir, WORK_SESSIONS_FILE),
        config.lifecycle?.clock ?? systemClock,
      );
      return new AgentRuntimes(sessions, settings, note, work);
    },
  };
}

/** The PostgreSQL store's runtime-session tables, on its pool; loads the module only for that store. */
async function sharedRuntimeSessions(store: Store): Promise<RuntimeSessionStore | undefined> {
  if (store.backend !== "postgres") return undefined;
  const { PostgresStore } = await import("../../store/postgres/postgres-store.js");
  if (!(store instanceof PostgresStore)) return undefined;
  return new (await import("./postgres.js")).PgRuntimeSessionStore(store.pool);
}
