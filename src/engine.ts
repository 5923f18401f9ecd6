import { join, resolve } from "node:path";
import { Compactor } from "./compaction/compactor.js";
import { type CompactionThread, compactionThread } from "./compaction/thread.js";
import type { ModelChoice } from "./config/effective-model.js";
import type { EngineConfig } from "./config/engine-config.js";
import { routingConfigOf } from "./config/routing.js";
import type { InjectionHook } from "./context/index.js";
import type {
  CompactResult,
  Engine,
  EngineAppendOptions,
  EngineHooks,
  HistoryOptions,
  OverrideChange,
  PruneResult,
  StartedTurn,
} from "./engine/api.js";
import { readHistory } from "./engine/history.js";
import { buildModels, modelNamed, summarizerOf } from "./engine/models.js";
import { SessionSettings } from "./engine/session-settings.js";
import { initForKey, type Route, type RoutingConfig, routeEnvelope, validateKey } from "./keys/index.js";
import { systemClock, systemTimer } from "./lifecycle/clock.js";
import { forgetIdentity, reconcileIdentityLinks } from "./lifecycle/identity-changes.js";
import type { InLanes } from "./lifecycle/in-lanes.js";
import { resolveSettings } from "./lifecycle/overrides.js";
import { nextDue, sessionRule, validateResetPolicy } from "./lifecycle/reset-policy.js";
import {
  applyRetention,
  DEFAULT_RETENTION,
  planRetention,
  type RetentionPolicy,
} from "./lifecycle/retention.js";
import { resetIfDue, Sweeper, type SweepReport } from "./lifecycle/sweeper.js";
import { TitleWriter } from "./lifecycle/title-writer.js";
import { DEFAULT_RESET_TRIGGERS, validateResetTriggers } from "./lifecycle/triggers.js";
import type { Entry, EntryInput, ResetCause } from "./model/entry.js";
import type { Envelope } from "./model/envelope.js";
import { newId } from "./model/ids.js";
import type { Inbox } from "./model/inbox.js";
import { DEFAULT_QUEUE, parseQueueCommand, QUEUE_MODES } from "./model/queue.js";
import type { Runtime } from "./model/runtime.js";
import type { OverrideValue, StoredContext } from "./model/session.js";
import type { Summarizer } from "./model/summarizer.js";
import type { TextModel } from "./model/text-model.js";
import { adminToolsFor } from "./runtimes/admin-tools.js";
import { AgentLoop } from "./runtimes/agent-runner.js";
import { echoRuntime } from "./runtimes/echo.js";
import { runtimeResolver } from "./runtimes/resolve.js";
import type { AgentRuntimes } from "./runtimes/sessions/agent-runtimes.js";
import { openAgentRuntimes, usesModelEndpoint } from "./runtimes/sessions/open.js";
import { type AgentsSession, agentsSession } from "./sdk/agents-session.js";
import { sessionModels } from "./session-models.js";
import { openStore } from "./store/open.js";
import { sessionNotFound } from "./store/session-log.js";
import type { AppendResult, DeleteResult, ResetResult, Store } from "./store/store.js";
import { observeStore, SessionEvents } from "./turns/events.js";
import { relayForeignAppends } from "./turns/foreign-events.js";
import { InboxRecovery, type RecoveryReport } from "./turns/inbox-recovery.js";
import { openInbox } from "./turns/open-inbox.js";
import { hasLeases } from "./turns/queue-types.js";
import { noteOn, recordInput, runTurn } from "./turns/run-turn.js";
import { summaryOf } from "./turns/session-actor.js";
import { SessionActors } from "./turns/session-actors.js";
import type { AgentTurnOptions, TurnOptions, TurnResult, TurnRunner } from "./turns/turn.js";
import type { TurnDeps, TurnLifecycle } from "./turns/turn-deps.js";
import {
  DEFAULT_STUCK_AFTER_MS,
  type EvictedTurn,
  type RunningTurn,
  statusOfItem,
  type TurnStatus,
  TurnStatuses,
} from "./turns/turn-status.js";

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
  const models = buildModels(given.models ?? {});
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
  const { agents, added } = await openAgentRuntimes(given, store, async (key, text) => {
    if (!(await store.getSession(key))) return;
    const note = { type: "note", level: "info", code: "RUNTIME_SESSIONS_CLEARED", text } as const;
    await store.append(key, [{ ...note, ts: clock.now() }]);
  });
  // Agents added with `sessiond agents duplicate` (agents.json, or the shared database) route like the
  // config's own.
  const config: EngineConfig =
    added.length === 0
      ? given
      : { ...given, agents: [...(given.agents ?? [given.defaultAgent ?? "main"]), ...added] };
  const routing = routingConfigOf(config);
  const agentNotices = await agents.reconcile();
  return new SessionEngine({
    agents,
    agentNotices,
    store,
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

// In config/, so that commands that only route need not load the engine.
export { routingConfigOf };

const DEFAULT_RECOVER_MAX_AGE_MS = 10 * 60_000;

function isStore(value: EngineConfig["store"]): value is Store {
  return typeof value === "object" && value !== null && "append" in value;
}

interface EngineParts {
  store: Store;
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
  /** Runtime sessions cleared at start-up because an agent's working directory changed. */
  agentNotices: string[];
  runtimes?: Map<string, Runtime>;
}

class SessionEngine implements Engine {
  readonly store: Store;
  readonly routing: RoutingConfig;
  readonly dataDir: string;
  readonly summarizer: Summarizer;
  readonly events = new SessionEvents();
  readonly sessions: Engine["sessions"];
  readonly overrides: Engine["overrides"];
  readonly identity: Engine["identity"];
  readonly agents: AgentRuntimes;
  private readonly actors: SessionActors;
  private readonly compactor: Compactor;
  private readonly sweeper: Sweeper;
  private readonly titles: TitleWriter | undefined;
  private readonly lifecycle: TurnLifecycle & { retention: RetentionPolicy };
  private readonly turnDeps: TurnDeps;
  private readonly resolveRuntime: (agent: string, session?: ModelChoice) => Runtime;
  private readonly sessionSettings: SessionSettings;
  private readonly recovery: InboxRecovery;
  private readonly statuses: TurnStatuses;
  readonly inbox: Inbox | undefined;
  readonly queue: Engine["queue"];
  private readonly echo = echoRuntime();
  private readonly loop: AgentLoop;
  private closing?: Promise<void>;
  private readonly stopObserving: () => void;

  constructor(private readonly parts: EngineParts) {
    const observed = observeStore(parts.store, this.events, parts.config.lifecycle?.clock ?? systemClock);
    this.store = observed.store;
    this.stopObserving = observed.stop;
    relayForeignAppends(parts.store, this.events);
    this.agents = parts.agents;
    this.sessionSettings = new SessionSettings(parts.config, parts.models, (agent) =>
      this.agents.settings.get(agent),
    );
    this.loop = new AgentLoop({
      runtimeFor: (agent, session) => this.runtimeFor(agent, session),
      permissionFor: (agent, key) => this.agents.permissionFor(agent, key),
      store: this.agents.store,
      agents: parts.routing.agents,
      settled: () => this.agents.settled(),
    });
    this.resolveRuntime = runtimeResolver(parts.config, (agent) => this.agents.settings.get(agent));
    const inLanes: InLanes = (keys, work) => this.actors.exclusiveAll(keys, work);
    const perSession = sessionModels(parts.models, {
      summarizer: parts.summarizer,
      ...(parts.config.compaction?.model ? { compaction: parts.config.compaction.model } : {}),
      ...(parts.config.titles?.model ? { titles: parts.config.titles.model } : {}),
    });
    this.titles = parts.titles && new TitleWriter(this.store, (s) => perSession.title(s), inLanes);
    this.routing = parts.routing;
    this.dataDir = parts.dataDir;
    this.summarizer = parts.summarizer;
    const lifecycle = parts.config.lifecycle ?? {};
    const resetTriggers = lifecycle.resetTriggers ?? DEFAULT_RESET_TRIGGERS;
    validateResetTriggers(resetTriggers);
    const policy = lifecycle.reset ?? {};
    validateResetPolicy(policy);
    this.lifecycle = {
      resetTriggers,
      policy,
      keepArchive: lifecycle.keepArchive ?? true,
      clock: lifecycle.clock ?? systemClock,
      retention: lifecycle.retention ?? DEFAULT_RETENTION,
    };
    // A compaction entry is derived from the archive, so it needs no fsync of its own: a crash before the
    // next durable commit only means compacting again (later commits are ordered after it).
    this.compactor = new Compactor(
      { default: parts.summarizer, of: (session) => perSession.summarizer(session) },
      (key, entries, options) => this.store.append(key, entries, { ...options, durability: "relaxed" }),
      () => this.lifecycle.clock.now(),
      parts.thread,
    );
    this.turnDeps = {
      store: this.store,
      compactor: this.compactor,
      settings: (agent, session) => this.sessionSettings.turn(agent, session),
      durabilityOf: (agent) => parts.config.agentOptions?.[agent]?.durability ?? "strict",
      injectors: parts.injectors,
      afterTurn: (key, session) => this.titles?.afterTurn(key, session),
      lifecycle: this.lifecycle,
    };
    this.sweeper = new Sweeper({
      store: this.store,
      policy: this.lifecycle.policy,
      retention: this.lifecycle.retention,
      keepArchive: this.lifecycle.keepArchive,
      clock: this.lifecycle.clock,
      inLanes,
      apply: (session) =>
        this.actors.exclusive(session.key, () =>
          resetIfDue(this.store, session.key, this.lifecycle.policy, this.lifecycle.clock.now(), {
            keepArchive: this.lifecycle.keepArchive,
          }),
        ),
      onError: () => {
        // A failed sweep is tried again at the next interval; the gateway logs it when it has a logger.
      },
    });
    const now = () => this.lifecycle.clock.now();
    this.statuses = new TurnStatuses(now, parts.config.turns?.resultsMaxBytes);
    this.inbox = parts.inbox;
    this.actors = new SessionActors({
      timer: lifecycle.timer ?? systemTimer,
      now,
      inbox: parts.inbox,
      statuses: this.statuses,
      events: this.events,
      leases: hasLeases(parts.store) ? parts.store.leases : undefined,
      maxLane: parts.config.maxQueuedTurns ?? DEFAULT_QUEUE.cap,
      settings: async (route) =>
        this.sessionSettings.queue(route.agent, await this.store.getSession(route.key)),
      turn: (batch, watch) => runTurn(this.turnDeps, batch, watch),
      dropped: async (route, texts) => {
        await noteOn(this.turnDeps, route, "QUEUE_DROPPED", summaryOf(texts)).catch(() => {
          // The dropped callers were told; a note that cannot be written changes nothing for them.
        });
      },
    });
    this.queue = { list: () => this.actors.list(), cancel: (id) => this.actors.cancel(id) };
    this.recovery = new InboxRecovery({
      inbox: parts.inbox,
      actors: this.actors,
      store: this.store,
      now,
      recoverMaxAgeMs: parts.config.turns?.recoverMaxAgeMs ?? DEFAULT_RECOVER_MAX_AGE_MS,
      route: (envelope) => this.route(envelope),
      runnerFor: (envelope) => this.agentRunner(envelope, {}),
      note: async (key, entry) => {
        await this.actors.exclusive(key, () => this.append(key, [{ ...entry, ts: now() }]));
      },
    });
    const interval = parts.config.lifecycle?.sweepIntervalMs ?? 60_000;
    if (interval > 0) this.sweeper.start(interval);
    this.overrides = {
      set: (key, values) => this.changeOverrides(key, Object.entries(values)),
      unset: (key, names) =>
        this.changeOverrides(
          key,
          names.map((name) => [name, null]),
        ),
      resolve: async (key) => {
        const session = await this.store.getSession(validateKey(key));
        if (!session) throw sessionNotFound(key);
        return resolveSettings({
          session: session.overrides,
          ...this.sessionSettings.inherited(session.agent),
        });
      },
    };
    const { identityLinks, agents } = parts.routing;
    this.identity = {
      check: () => reconcileIdentityLinks(this.store, this.dataDir, identityLinks, agents),
      relink: () =>
        reconcileIdentityLinks(this.store, this.dataDir, identityLinks, agents, { apply: true, inLanes }),
      forget: (identity) => forgetIdentity(this.store, identity, identityLinks, agents, inLanes),
    };
    this.sessions = {
      list: (query) => this.store.listSessions(query),
      get: (key) => this.store.getSession(validateKey(key)),
      generations: (key) => this.store.generations(validateKey(key)),
      resetDueAt: (session) =>
        session.state === "active"
          ? nextDue(session, sessionRule(session, this.lifecycle.policy))
          : undefined,
    };
  }

  route(envelope: Envelope): Route {
    return routeEnvelope(envelope, this.routing);
  }

  append(key: string, entries: EntryInput[], options: EngineAppendOptions = {}): Promise<AppendResult> {
    validateKey(key);
    const { init, ...appendOptions } = options;
    return this.store.append(key, entries, {
      ...appendOptions,
      init: init ?? initForKey(key, this.routing.defaultAgent, this.routing.agents),
    });
  }

  async history(key: string, options: HistoryOptions = {}): Promise<Entry[]> {
    return readHistory(this.store, validateKey(key), options);
  }

  context(key: string): Promise<StoredContext | undefined> {
    return this.store.loadContext(validateKey(key));
  }

  compact(key: string, options: { signal?: AbortSignal } = {}): Promise<CompactResult> {
    validateKey(key);
    return this.actors.exclusive(key, async () => {
      const context = await this.store.loadContext(key);
      if (!context) throw sessionNotFound(key);
      const settings = this.sessionSettings.turn(context.session.agent, context.session);
      const outcome = await this.compactor.compact({
        key,
        context,
        policy: settings.policy,
        ...(options.signal ? { signal: options.signal } : {}),
      });
      return { summary: outcome.entry.summary, entry: outcome.entry };
    });
  }

  idle(key: string): Promise<void> {
    return this.actors.idle(validateKey(key));
  }

  reset(key: string, cause: ResetCause = "manual"): Promise<ResetResult> {
    validateKey(key);
    return this.actors.exclusive(key, () => this.store.reset(key, cause));
  }

  delete(key: string): Promise<DeleteResult> {
    validateKey(key);
    return this.actors.exclusive(key, async () => {
      const result = await this.store.delete(key);
      if (result.sessions === 0) throw sessionNotFound(key);
      await this.agents.forgetConversation(key);
      return result;
    });
  }

  session(key: string): AgentsSession {
    validateKey(key);
    return agentsSession({
      key,
      inLane: (work) => this.actors.exclusive(key, work),
      context: () => this.store.loadContext(key),
      append: (entries, expectSessionId) =>
        this.append(key, entries, expectSessionId === undefined ? {} : { expectSessionId }),
      reset: async () => {
        if (await this.store.getSession(key)) await this.store.reset(key, "api");
      },
    });
  }

  turn(envelope: Envelope, options: AgentTurnOptions = {}): Promise<TurnResult> {
    const route = this.route(envelope);
    const command = parseQueueCommand(envelope.text);
    if (command) return this.queueCommand(route, command);
    return this.actors.submit(route, envelope, this.agentRunner(envelope, options), options.signal, true)
      .result;
  }

  turnWith(envelope: Envelope, run: TurnRunner, options: TurnOptions = {}): Promise<TurnResult> {
    const route = this.route(envelope);
    const command = parseQueueCommand(envelope.text);
    if (command) return this.queueCommand(route, command);
    // A runner of the caller's cannot run again after a restart: only agent turns are admitted.
    return this.actors.submit(route, envelope, run, options.signal, false).result;
  }

  async start(envelope: Envelope, options: AgentTurnOptions = {}): Promise<StartedTurn> {
    const route = this.route(envelope);
    const command = parseQueueCommand(envelope.text);
    if (command) {
      return {
        id: newId(this.lifecycle.clock.now()),
        key: route.key,
        result: this.queueCommand(route, command),
      };
    }
    const turn = this.actors.submit(
      route,
      envelope,
      this.agentRunner(envelope, options),
      options.signal,
      true,
    );
    // The caller that stops waiting here still gets the rejection through `result`.
    turn.result.catch(() => {});
    await turn.stored;
    return { id: turn.id, key: turn.key, result: turn.result };
  }

  recover(onTakeOver?: (report: RecoveryReport) => void): Promise<RecoveryReport> {
    return this.recovery.recover(onTakeOver);
  }

  async turnStatus(id: string): Promise<TurnStatus | EvictedTurn | undefined> {
    const known = this.statuses.get(id);
    if (known) return known;
    const item = await this.parts.inbox?.get(id);
    return item && statusOfItem(item);
  }

  running(): RunningTurn[] {
    return this.statuses.runningTurns(this.parts.config.turns?.stuckAfterMs ?? DEFAULT_STUCK_AFTER_MS);
  }

  abort(id: string): "cancelled" | "aborted" | undefined {
    return this.actors.abort(id);
  }

  /** `/queue <mode>`: sets the session's queue mode (a note records it); `/queue` alone says the current one. */
  private async queueCommand(
    route: Route,
    command: NonNullable<ReturnType<typeof parseQueueCommand>>,
  ): Promise<TurnResult> {
    const { key } = route;
    const modes = QUEUE_MODES.join(", ");
    let notice: string;
    if (command.mode === undefined) {
      const current = this.sessionSettings.queue(route.agent, await this.store.getSession(key)).mode;
      notice =
        command.raw === ""
          ? `Queue mode: ${current}. Modes: ${modes}.`
          : `Unknown queue mode ${JSON.stringify(command.raw)}; modes: ${modes}.`;
    } else {
      await this.actors.exclusive(key, () =>
        noteOn(this.turnDeps, route, "QUEUE_MODE", `Queue mode set to ${command.mode}.`),
      );
      await this.changeOverrides(key, [["queue.mode", command.mode]]);
      notice = `Queue mode: ${command.mode}.`;
    }
    const session = await this.store.getSession(key);
    return { key, sessionId: session?.id ?? "", deduplicated: false, notice };
  }

  runtimeFor(agent: string, session?: ModelChoice): Runtime {
    const fixed = this.parts.runtimes;
    if (fixed) return fixed.get(agent) ?? this.echo;
    return this.agents.settings.get(agent) ? this.resolveRuntime(agent, session) : this.echo;
  }

  /** The agent's runtime as a runner, with the tools its entry point gets (see `AgentTurnOptions.tools`). */
  private agentRunner(envelope: Envelope, options: AgentTurnOptions): TurnRunner {
    const admins = this.parts.config.admins ?? [];
    const tools =
      options.tools ??
      (envelope.entryPoint?.kind === "web_chat"
        ? adminToolsFor(envelope.sender.id, { engine: this, admins })
        : undefined);
    const { onEvent } = options;
    return this.loop.runner({
      ...(tools ? { tools } : {}),
      ...(onEvent ? { onEvent: (event) => onEvent(event) } : {}),
    });
  }

  record(envelope: Envelope): Promise<AppendResult> {
    const route = this.route(envelope);
    return this.actors.exclusive(route.key, () => recordInput(this.turnDeps, route, envelope));
  }

  queued(): Map<string, number> {
    return this.actors.depths();
  }

  async startupWarnings(): Promise<string[]> {
    const { merges } = await this.identity.check();
    return [
      ...this.parts.agentNotices,
      ...merges.map(
        (m) =>
          `session.identity_links changed: ${m.from} now routes to ${m.to}; ` +
          "run `sessiond sessions relink --apply` to carry its history over",
      ),
    ];
  }

  sweep(): Promise<SweepReport> {
    return this.sweeper.runOnce();
  }

  async prune(options: { dryRun?: boolean } = {}): Promise<PruneResult> {
    const plan = await planRetention(this.store, this.lifecycle.retention, this.lifecycle.clock.now());
    if (options.dryRun) return { plan };
    return {
      plan,
      applied: await applyRetention(this.store, plan, (keys, work) => this.actors.exclusiveAll(keys, work)),
    };
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      await this.sweeper.stop();
      await this.recovery.close();
      await this.actors.drain();
      await this.titles?.drain();
      await this.parts.inbox?.close();
      // Before the store: a PostgreSQL store's runtime sessions write on its pool.
      if (this.parts.config.runtimeSessions === undefined) await this.agents.store.close();
      // Flushed either way; closed only when the engine opened it.
      if (this.parts.ownsStore) await this.store.close();
      else await this.store.sync();
      await this.parts.thread.close();
      this.stopObserving();
    })();
    return this.closing;
  }

  private changeOverrides(
    key: string,
    changes: Array<[string, OverrideValue | null]>,
  ): Promise<OverrideChange[]> {
    validateKey(key);
    return this.actors.exclusive(key, async () => {
      const session = await this.store.getSession(key);
      if (!session) throw sessionNotFound(key);
      const planned = this.sessionSettings.plan(session, changes);
      await this.store.updateSession(key, { overrides: planned.patch });
      return planned.changes;
    });
  }
}
