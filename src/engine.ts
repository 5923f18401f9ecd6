import { join, resolve } from "node:path";
import { compactionThread } from "./compaction/thread.js";
import type { EngineConfig } from "./config/engine-config.js";
import { routingConfigOf } from "./config/routing.js";
import type { Engine, EngineHooks } from "./engine/api.js";
import { buildModels, meteredModels, modelNamed, summarizerOf } from "./engine/models.js";
import { SessionEngine } from "./engine/session-engine.js";
import { withIncognito } from "./incognito/wire.js";
import type { LedgerSlot } from "./ledger/metered-model.js";
import { systemClock } from "./lifecycle/clock.js";
import type { Inbox } from "./model/inbox.js";
import { openAgentRuntimes, usesModelEndpoint } from "./runtimes/sessions/open.js";
import { openShareStore } from "./shares/open.js";
import { EngineShares } from "./shares/shares.js";
import { openStore } from "./store/open.js";
import type { Store } from "./store/store.js";
import { openInbox } from "./turns/open-inbox.js";

export type * from "./engine/api.js";

/** The library's front door: wires the store, routing, compaction, titles and lanes from one config. */
export async function createEngine(given: EngineConfig = {}, hooks: EngineHooks = {}): Promise<Engine> {
  const owned: Owned = {};
  try {
    return await wireEngine(given, hooks, owned);
  } catch (error) {
    // What fails once the store is open (a corrupt runtime-sessions file, say) must not leave it open.
    await owned.inbox?.close().catch(() => undefined);
    await owned.store?.close().catch(() => undefined);
    throw error;
  }
}

/** What `createEngine` opened so far, closed again when a later step fails. */
interface Owned {
  store?: Store;
  inbox?: Inbox;
}

async function wireEngine(given: EngineConfig, hooks: EngineHooks, owned: Owned): Promise<Engine> {
  const dataDir = resolve(given.dataDir ?? ".sessiond");
  // Every title and summary call is a ledger entry; the ledger is attached once it is open, below.
  const ledgerSlot: LedgerSlot = {};
  const models = meteredModels(buildModels(given.models ?? {}), given.models ?? {}, ledgerSlot);
  const thread = compactionThread();
  const summarizer = given.compaction?.summarizer ?? summarizerOf(given.compaction?.model, models, thread);
  const titleModel =
    given.titles?.model === undefined ? undefined : modelNamed(given.titles.model, models, "titles.model");
  for (const [agent, options] of Object.entries(given.agentOptions ?? {})) {
    if (options.model !== undefined && usesModelEndpoint(options.runtime)) {
      modelNamed(options.model, models, `agents.${agent}.model`);
    }
  }
  const ownsStore = !isStore(given.store);
  const store = isStore(given.store)
    ? given.store
    : await openStore(given.store ?? { backend: "sqlite", path: join(dataDir, "sessiond.db") });
  if (ownsStore) owned.store = store;
  const clock = given.lifecycle?.clock ?? systemClock;
  const inbox = await openInbox(
    given.turns?.inbox,
    store,
    given.store ?? { backend: "sqlite", path: join(dataDir, "sessiond.db") },
  );
  if (inbox) owned.inbox = inbox;
  // Through the incognito routing once it is built: an incognito key's note stays in memory.
  let noteStore = store;
  const noteWriter = async (key: string, text: string) => {
    if (!(await noteStore.getSession(key))) return;
    const note = { type: "note", level: "info", code: "RUNTIME_SESSIONS_CLEARED", text } as const;
    await noteStore.append(key, [{ ...note, ts: clock.now() }]);
  };
  const opened = await openAgentRuntimes(given, store, noteWriter);
  const { added } = opened;
  // Agents added with `sessiond agents duplicate` (agents.json, or the shared database) route like the
  // config's own.
  const config: EngineConfig =
    added.length === 0
      ? given
      : { ...given, agents: [...(given.agents ?? [given.defaultAgent ?? "main"]), ...added] };
  const routing = routingConfigOf(config);
  // Incognito keys' sessions and runtime sessions in memory; the inbox and runtimes opened on the store.
  const incognito = withIncognito(store, opened.agents, config, routing, noteWriter);
  noteStore = incognito.store;
  const { agents } = incognito;
  ledgerSlot.ledger = agents.ledger;
  const shares = new EngineShares(await openShareStore(given, store), incognito.store, {
    now: () => clock.now(),
    unshareable: (key) => incognito.keys.has(key),
  });
  const agentNotices = await agents.reconcile();
  return new SessionEngine({
    agents,
    agentNotices,
    shares,
    store: incognito.store,
    incognito: incognito.keys,
    ownsStore,
    ...(inbox ? { inbox } : {}),
    routing,
    dataDir,
    summarizer,
    thread,
    models,
    config,
    titles: config.titles?.enabled === false ? undefined : { model: titleModel },
    injectors: hooks.injectors ?? [],
    ...(hooks.runtimes ? { runtimes: hooks.runtimes } : {}),
  });
}

const _DEFAULT_RECOVER_MAX_AGE_MS = 10 * 60_000;

function isStore(value: EngineConfig["store"]): value is Store {
  return typeof value === "object" && value !== null && "append" in value;
}

// In config/, so that commands that only route need not load the engine.
export { routingConfigOf };
