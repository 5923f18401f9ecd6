import { dirname, join } from "node:path";
import type { EngineConfig } from "../../config/engine-config.js";
import { type AgentRuntimeSettings, AgentSettingsFile, type RuntimeKind } from "../agents.js";
import { AgentRuntimes, type NoteWriter } from "./agent-runtimes.js";
import { MemoryRuntimeSessionStore } from "./memory.js";
import { SqliteRuntimeSessionStore } from "./sqlite.js";
import type { RuntimeSessionStore } from "./store.js";

export const RUNTIME_SESSIONS_FILE = "runtime-sessions.db";
export const AGENTS_FILE = "agents.json";

/** `model` agents (and agents that name no runtime) take `model` from the config's `models`. */
export function usesModelEndpoint(runtime: RuntimeKind | undefined): boolean {
  return runtime === undefined || runtime === "model";
}

/**
 * Where runtime sessions and agents.json live: beside the SQLite store file (the data directory), else in
 * memory (a memory store, or a store object given by the caller). Returns the agents agents.json adds.
 */
export function openAgentRuntimes(config: EngineConfig): {
  added: string[];
  build(note: NoteWriter): AgentRuntimes;
} {
  const store = config.store;
  const dir =
    store && !("append" in store) && store.backend === "sqlite" && store.path !== ":memory:"
      ? dirname(store.path)
      : store === undefined
        ? (config.dataDir ?? ".sessiond")
        : undefined;
  const base: Record<string, AgentRuntimeSettings> = {};
  for (const agent of config.agents ?? [config.defaultAgent ?? "main"]) {
    const options = config.agentOptions?.[agent] ?? {};
    const { compaction: _c, durability: _d, ...settings } = options;
    base[agent] = settings;
  }
  const settings = new AgentSettingsFile(dir === undefined ? undefined : join(dir, AGENTS_FILE), base);
  const added = settings.names().filter((name) => !(name in base));
  return {
    added,
    build(note) {
      const sessions: RuntimeSessionStore =
        config.runtimeSessions ??
        (dir === undefined
          ? new MemoryRuntimeSessionStore()
          : new SqliteRuntimeSessionStore(join(dir, RUNTIME_SESSIONS_FILE)));
      return new AgentRuntimes(sessions, settings, note);
    },
  };
}
