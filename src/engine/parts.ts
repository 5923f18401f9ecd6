import type { CompactionThread } from "../compaction/thread.js";
import type { EngineConfig } from "../config/engine-config.js";
import type { InjectionHook } from "../context/index.js";
import type { IncognitoKeys } from "../incognito/keys.js";
import type { RoutingConfig } from "../keys/index.js";
import type { Inbox } from "../model/inbox.js";
import type { Runtime } from "../model/runtime.js";
import type { Summarizer } from "../model/summarizer.js";
import type { TextModel } from "../model/text-model.js";
import type { AgentRuntimes } from "../runtimes/sessions/agent-runtimes.js";
import type { EngineShares } from "../shares/shares.js";
import type { Store } from "../store/store.js";

/** What `createEngine` opened and resolved, handed to the engine it builds. */
export interface EngineParts {
  store: Store;
  /** The keys whose sessions `store` keeps in memory only. */
  incognito: IncognitoKeys;
  /** False when the caller passed the store in: closing the engine leaves it open. */
  ownsStore: boolean;
  /** The inbox the engine opened for durable admission (closed with it). */
  inbox?: Inbox;
  routing: RoutingConfig;
  dataDir: string;
  summarizer: Summarizer;
  /** Where compaction's CPU-heavy steps run, off the event loop. */
  thread: CompactionThread;
  models: Map<string, TextModel>;
  config: EngineConfig;
  /** Titles are on unless disabled; `model` undefined means offline titles. */
  titles: { model: TextModel | undefined } | undefined;
  injectors: InjectionHook[];
  agents: AgentRuntimes;
  /** Share links (closed with the engine, before the store). */
  shares: EngineShares;
  /** Runtime sessions cleared at start-up because an agent's working directory changed. */
  agentNotices: string[];
  runtimes?: Map<string, Runtime>;
}
