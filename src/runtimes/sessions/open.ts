import { dirname, join } from "node:path";
import type { EngineConfig } from "../../config/engine-config.js";
import { openCostLedger } from "../../ledger/open.js";
import { systemClock } from "../../lifecycle/clock.js";
import { META_DIR as JSONL_META_DIR } from "../../store/jsonl/meta-dir.js";
import type { Store } from "../../store/store.js";
import {
  type AgentRuntimeSettings,
  AgentSettings,
  type AgentsLayer,
  agentsLayerSchema,
  emptyAgentsLayer,
  type RuntimeKind,
} from "../agents.js";
import { FileDocument, MemoryDocument, type SettingsDocument } from "../settings-document.js";
import { AgentRuntimes, type NoteWriter } from "./agent-runtimes.js";
import { MemoryRuntimeSessionStore } from "./memory.js";
import { SqliteRuntimeSessionStore } from "./sqlite.js";
import type { RuntimeSessionStore } from "./store.js";
import {
  emptyWorkSessions,
  WORK_SESSIONS_FILE,
  WorkSessions,
  type WorkSessionsDocument,
  workSessionsSchema,
} from "./work-sessions.js";

export const RUNTIME_SESSIONS_FILE = "runtime-sessions.db";
export const AGENTS_FILE = "agents.json";

export function runtimeDir(config: EngineConfig): string | undefined {
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
 * Where runtime sessions, agents.json and work sessions live: beside the SQLite store file (the data
 * directory); in the JSONL directory's `.sessiond` folder (so a CrabTalk directory holds only session
 * files), as the same SQLite file; in a PostgreSQL store's database, shared by every gateway on it; else in
 * memory (a memory store, or a store object given by the caller). `added`: the agents the layer adds, read
 * once the store is open.
 */
export async function openAgentRuntimes(
  config: EngineConfig,
  store: Store,
  note: NoteWriter,
): Promise<{ added: string[]; agents: AgentRuntimes }> {
  const dir = runtimeDir(config);
  const base: Record<string, AgentRuntimeSettings> = {};
  for (const agent of config.agents ?? [config.defaultAgent ?? "main"]) {
    const options = config.agentOptions?.[agent] ?? {};
    const { compaction: _c, durability: _d, queue: _q, ...settings } = options;
    base[agent] = settings;
  }
  const shared = await sharedDocuments(store);
  const layer: SettingsDocument<AgentsLayer> =
    shared?.agents ??
    (dir === undefined
      ? new MemoryDocument(emptyAgentsLayer())
      : new FileDocument(join(dir, AGENTS_FILE), agentsLayerSchema, emptyAgentsLayer, false));
  const work: SettingsDocument<WorkSessionsDocument> =
    shared?.work ??
    (dir === undefined
      ? new MemoryDocument(emptyWorkSessions())
      : new FileDocument(join(dir, WORK_SESSIONS_FILE), workSessionsSchema, emptyWorkSessions, true));
  const settings = new AgentSettings(layer, base);
  const sessions: RuntimeSessionStore =
    config.runtimeSessions ??
    (await sharedRuntimeSessions(store)) ??
    (dir === undefined
      ? new MemoryRuntimeSessionStore()
      : new SqliteRuntimeSessionStore(join(dir, RUNTIME_SESSIONS_FILE)));
  const agents = new AgentRuntimes(
    sessions,
    settings,
    note,
    new WorkSessions(work, config.lifecycle?.clock ?? systemClock),
    await openCostLedger(dir, store),
  );
  return { added: settings.names().filter((name) => !(name in base)), agents };
}

/** A PostgreSQL store: the module loaded only for it. */
async function postgresOf(store: Store) {
  if (store.backend !== "postgres") return undefined;
  const { PostgresStore } = await import("../../store/postgres/postgres-store.js");
  return store instanceof PostgresStore ? store : undefined;
}

/** The PostgreSQL store's runtime-session tables, on its pool. */
async function sharedRuntimeSessions(store: Store): Promise<RuntimeSessionStore | undefined> {
  const pg = await postgresOf(store);
  return pg && new (await import("./postgres.js")).PgRuntimeSessionStore(pg.pool, pg.leases);
}

/** The agents layer and work sessions as rows of the PostgreSQL store's database, shared. */
async function sharedDocuments(store: Store) {
  const pg = await postgresOf(store);
  if (!pg) return undefined;
  const { PgDocument } = await import("../postgres-document.js");
  return {
    agents: await PgDocument.open(pg.pool, pg.notifications, "agents", agentsLayerSchema(), emptyAgentsLayer),
    work: await PgDocument.open(
      pg.pool,
      pg.notifications,
      "work-sessions",
      workSessionsSchema(),
      emptyWorkSessions,
    ),
  };
}
