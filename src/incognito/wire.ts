import type { EngineConfig } from "../config/engine-config.js";
import type { RoutingConfig } from "../keys/index.js";
import { AgentRuntimes, type NoteWriter } from "../runtimes/sessions/agent-runtimes.js";
import type { Store } from "../store/store.js";
import { DEFAULT_INCOGNITO_LIMITS, IncognitoKeys } from "./keys.js";
import { IncognitoLedger } from "./ledger.js";
import { incognitoMatcher } from "./rules.js";
import { IncognitoRuntimeSessions } from "./runtime-sessions.js";
import { routeIncognito } from "./store.js";

/** `createEngine`'s store and agents with incognito keys routed to memory, and the keys themselves. */
export function withIncognito(
  store: Store,
  agents: AgentRuntimes,
  config: EngineConfig,
  routing: RoutingConfig,
  note: NoteWriter,
): { store: Store; agents: AgentRuntimes; keys: IncognitoKeys } {
  const settings = config.incognito ?? {};
  const keys = new IncognitoKeys(store, incognitoMatcher(settings.for ?? [], routing), {
    maxKeys: settings.maxKeys ?? DEFAULT_INCOGNITO_LIMITS.maxKeys,
    maxBytes: settings.maxBytes ?? DEFAULT_INCOGNITO_LIMITS.maxBytes,
  });
  return {
    store: routeIncognito(store, keys),
    agents: new AgentRuntimes(
      new IncognitoRuntimeSessions(agents.store, keys),
      agents.settings,
      note,
      agents.workSessions,
      new IncognitoLedger(agents.ledger, keys),
    ),
    keys,
  };
}
