import type { RoutingConfig } from "../keys/index.js";
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
  /** Turns that may wait behind the running one on a session; default 16. */
  maxQueuedTurns?: number;
}
