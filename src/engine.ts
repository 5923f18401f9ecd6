import { join, resolve } from "node:path";
import { Compactor } from "./compaction/compactor.js";
import { DEFAULT_COMPACTION, resolveCompactionPolicy } from "./compaction/policy.js";
import { modelSummarizer } from "./compaction/summarizers/model.js";
import { type CompactionThread, compactionThread } from "./compaction/thread.js";
import type { ModelChoice } from "./config/effective-model.js";
import { effectiveModelName } from "./config/effective-model.js";
import type { EngineConfig, ModelConfig } from "./config/engine-config.js";
import { routingConfigOf } from "./config/routing.js";
import type { InjectionHook } from "./context/index.js";
import { initForKey, type Route, type RoutingConfig, routeEnvelope, validateKey } from "./keys/index.js";
import { systemClock, systemTimer } from "./lifecycle/clock.js";
import {
  type ForgetResult,
  forgetIdentity,
  type IdentityLinkCheck,
  reconcileIdentityLinks,
} from "./lifecycle/identity-changes.js";
import type { InLanes } from "./lifecycle/in-lanes.js";
import {
  compactionOverrides,
  type InheritedLayers,
  type OverridePlan,
  planOverrideChange,
  queueOverrides,
  type ResolvedSetting,
  resolveSetting,
  resolveSettings,
} from "./lifecycle/overrides.js";
import { nextDue, sessionRule, validateResetPolicy } from "./lifecycle/reset-policy.js";
import {
  applyRetention,
  DEFAULT_RETENTION,
  planRetention,
  type RetentionPlan,
  type RetentionPolicy,
  type RetentionResult,
} from "./lifecycle/retention.js";
import { resetIfDue, Sweeper, type SweepReport } from "./lifecycle/sweeper.js";
import { TitleWriter } from "./lifecycle/title-writer.js";
import { DEFAULT_RESET_TRIGGERS, validateResetTriggers } from "./lifecycle/triggers.js";
import type { CompactionEntry, Entry, EntryInput, ResetCause } from "./model/entry.js";
import type { Envelope } from "./model/envelope.js";
import { SessiondError } from "./model/errors.js";
import { newId } from "./model/ids.js";
import type { Inbox } from "./model/inbox.js";
import { DEFAULT_QUEUE, parseQueueCommand, QUEUE_MODES, type QueueSettings } from "./model/queue.js";
import type { Runtime } from "./model/runtime.js";
import type { OverrideValue, Session, SessionInit, StoredContext } from "./model/session.js";
import type { Summarizer } from "./model/summarizer.js";
import type { TextModel } from "./model/text-model.js";
import { adminToolsFor } from "./runtimes/admin-tools.js";
import { agentRunner } from "./runtimes/agent-runner.js";
import { echoRuntime } from "./runtimes/echo.js";
import { createTextModel } from "./runtimes/llm/index.js";
import { DEFAULT_OPENAI_BASE_URL } from "./runtimes/model.js";
import { runtimeResolver } from "./runtimes/resolve.js";
import type { AgentRuntimes } from "./runtimes/sessions/agent-runtimes.js";
import { openAgentRuntimes, usesModelEndpoint } from "./runtimes/sessions/open.js";
import { type AgentsSession, agentsSession } from "./sdk/agents-session.js";
import { sessionModels } from "./session-models.js";
import { openStore } from "./store/open.js";
import { sessionNotFound } from "./store/session-log.js";
import type {
  AppendOptions,
  AppendResult,
  DeleteResult,
  ResetResult,
  SessionPage,
  SessionQuery,
  Store,
} from "./store/store.js";
import { Admission } from "./turns/admission.js";
import { AdmittedTurns, type RecoveryReport } from "./turns/admitted-turns.js";
import { observedStore, SessionEvents } from "./turns/events.js";
import { relayForeignAppends } from "./turns/foreign-events.js";
import type { Lanes } from "./turns/lanes.js";
import { lanesFor } from "./turns/lease-lanes.js";
import { openInbox } from "./turns/open-inbox.js";
import { type AgentTurnSettings, type PipelineDeps, TurnPipeline } from "./turns/pipeline.js";
import type { AgentTurnOptions, TurnOptions, TurnResult, TurnRunner } from "./turns/turn.js";
import { type Batch, type QueuedInput, summaryOf, TurnQueue } from "./turns/turn-queue.js";
import {
  DEFAULT_STUCK_AFTER_MS,
  type EvictedTurn,
  type RunningTurn,
  type TurnStatus,
  TurnStatuses,
} from "./turns/turn-status.js";

export interface HistoryOptions {
  /** At most this many entries: the newest ones. Default: all. */
  limit?: number;
  /** Only entries with a seq below this (in the current session). */
  before?: number;
  /** Also the archived generations before the current one, oldest first. */
  includeArchived?: boolean;
}

export interface OverrideChange {
  name: string;
  effect: OverridePlan["effect"];
  effective: ResolvedSetting;
}

export interface PruneResult {
  plan: RetentionPlan;
  applied?: RetentionResult;
}

/** `engine.append`'s options: the store's, plus how to start the session when the key has none. */
export interface EngineAppendOptions extends AppendOptions {
  /** The new session's facts when the key has none; default: guessed from the key. */
  init?: SessionInit;
}

export interface CompactResult {
  summary: string;
  entry: CompactionEntry;
}

export interface Engine {
  readonly store: Store;
  readonly routing: RoutingConfig;
  readonly dataDir: string;
  /** The summariser compaction uses: `offline`, or the configured model's provider. */
  readonly summarizer: Summarizer;
  /** The key and session facts an inbound message routes to. */
  route(envelope: Envelope): Route;
  /** Appends entries to a key's current session, creating it (with `init`, or guessed from the key). */
  append(key: string, entries: EntryInput[], options?: EngineAppendOptions): Promise<AppendResult>;
  history(key: string, options?: HistoryOptions): Promise<Entry[]>;
  /** What a turn on this key would load now: the latest summary and the entries it keeps. */
  context(key: string): Promise<StoredContext | undefined>;
  readonly sessions: {
    list(query?: SessionQuery): Promise<SessionPage>;
    get(key: string): Promise<Session | undefined>;
    generations(key: string): Promise<Session[]>;
    /**
     * When the session's reset rule (the configured one, or its own overrides) makes it due; undefined
     * when it has none, or is archived. A due session is reset by its next message or the next sweep.
     */
    resetDueAt(session: Session): number | undefined;
  };
  /** Compacts now, whatever the thresholds; waits for a running turn of that key. */
  compact(key: string, options?: { signal?: AbortSignal }): Promise<CompactResult>;
  /**
   * Resolves once the key's running and queued work is done, the compaction a turn runs after its reply
   * included (the turn's result does not wait for it).
   */
  idle(key: string): Promise<void>;
  /** Archives the current session and starts a new one; waits for a running turn of that key. */
  reset(key: string, cause?: ResetCause): Promise<ResetResult>;
  /** Deletes every generation of a key; waits for a running turn of that key. */
  delete(key: string): Promise<DeleteResult>;
  /**
   * Stores an inbound message without a turn (a group message not addressed to the bot), in its key's
   * lane, so it lands between turns; idempotent on `platformMessageId`. The next turn there sees it.
   */
  record(envelope: Envelope): Promise<AppendResult>;
  /**
   * The OpenAI Agents SDK's `Session` over this key (`run(agent, input, { session: engine.session(key) })`):
   * its items are the key's current session, each write in the key's lane.
   */
  session(key: string): AgentsSession;
  /**
   * A turn with `run` in place of the agent's runtime (no runtime session, no cost): routed, in the key's
   * lane, input and reply stored as by `turn`. Not admitted to the inbox: `run` cannot run again after a
   * restart.
   */
  turnWith(envelope: Envelope, run: TurnRunner, options?: TurnOptions): Promise<TurnResult>;
  /**
   * Runs one turn on the routed agent's runtime: routes, stores the input, runs the agent's runtime (its
   * runtime session resumed and saved, the run priced, the agent marked as needing attention when it
   * fails), stores the reply, then compacts when due (the result does not wait; the next turn does).
   */
  turn(envelope: Envelope, options?: AgentTurnOptions): Promise<TurnResult>;
  /**
   * The agent turn above, answered as soon as its input is admitted (stored in the inbox): `id` names
   * the turn, `result` settles when it ends.
   */
  start(envelope: Envelope, options?: AgentTurnOptions): Promise<StartedTurn>;
  /**
   * Settles the inputs the inbox still has from before a crash or restart: those whose reply was stored
   * are marked done, those cut off or older than `turns.recoverMaxAgeMs` are marked interrupted (with a
   * note), the rest run again in admission order. `sessiond serve` calls it once at start-up. On a
   * PostgreSQL store only the inputs of processes found dead are taken (their heartbeat lapsed), and from
   * then on those of any process that dies later, each reported to `onTakeOver`.
   */
  recover(onTakeOver?: (report: RecoveryReport) => void): Promise<RecoveryReport>;
  /**
   * A turn's state by id (from `start`, or any turn's `id` in `GET /api/inspect`): queued, running, or how
   * it ended with its reply; `{ state: "evicted" }` once its result left the bounded memory for finished
   * turns; after a restart, what the inbox recorded (without the reply's text). Undefined when unknown.
   */
  turnStatus(id: string): Promise<TurnStatus | EvictedTurn | undefined>;
  /**
   * The turns running now, each `stuck` once its runtime sent no event for `turns.stuckAfterMs` (default
   * 2 minutes; `GET /api/inspect`, the `sessiond_turns_stuck` metric, the dashboard).
   */
  running(): RunningTurn[];
  /**
   * Stops a turn by id: a waiting one is cancelled, a running one aborted with what it streamed stored
   * as its reply and a `TURN_INTERRUPTED` note (as queue mode `interrupt`). Undefined when none has it.
   */
  abort(id: string): "cancelled" | "aborted" | undefined;
  /** Where agent turns' inputs are admitted; undefined when `turns.inbox` is false. */
  readonly inbox: Inbox | undefined;
  /**
   * The runtime that answers for an agent (`model`: a session's own model override, in place of the
   * agent's): as its settings say (agents.json over the config), else the offline echo.
   */
  runtimeFor(agent: string, session?: ModelChoice): Runtime;
  /** Per-session overrides (model, compaction thresholds, reset policy): session > agent > sender > default. */
  readonly overrides: {
    /** Sets overrides; a value equal to what the session inherits removes the override instead. */
    set(key: string, values: Record<string, OverrideValue>): Promise<OverrideChange[]>;
    unset(key: string, names: string[]): Promise<OverrideChange[]>;
    /** Every known setting as this session sees it, with where each value comes from. */
    resolve(key: string): Promise<Record<string, ResolvedSetting>>;
  };
  /** Changes of `session.identity_links`: what they orphan, carrying it over, forgetting a person. */
  readonly identity: {
    /** Cheap when the links did not change since they were last applied (no key is read then). */
    check(): Promise<IdentityLinkCheck>;
    relink(): Promise<IdentityLinkCheck>;
    forget(identity: string): Promise<ForgetResult>;
  };
  /** What an operator should hear at start-up: sessions orphaned by changed identity links. */
  startupWarnings(): Promise<string[]>;
  /** Runs the sweep now: due scheduled resets, then retention. It also runs every `sweepIntervalMs`. */
  sweep(): Promise<SweepReport>;
  /** What retention removes (webhook sessions idle 7 days, expired archives); applied unless `dryRun`. */
  prune(options?: { dryRun?: boolean }): Promise<PruneResult>;
  /** Every committed change and every turn's start and end, for live views. */
  readonly events: SessionEvents;
  /** Turns running or waiting, per key. */
  queued(): Map<string, number>;
  /** The inputs waiting for their session's turn (by queue mode), and cancelling one. */
  readonly queue: {
    list(): QueuedInput[];
    /** The waiting input's caller gets TURN_CANCELLED; false when no input with that id is waiting. */
    cancel(id: string): boolean;
  };
  /** Agents' runtime settings and runtime sessions (Claude Code, Codex, A2A), cost, needs-attention marks. */
  readonly agents: AgentRuntimes;
  /**
   * Waits for running turns and background titles, flushes, and closes what the engine opened: a store
   * (or runtime-session store) passed in through the config is left open for its owner to close.
   */
  close(): Promise<void>;
}

/** An admitted agent turn (`engine.start`). */
export interface StartedTurn {
  id: string;
  key: string;
  result: Promise<TurnResult>;
}

/** Library-only settings that have no place in a YAML file. */
export interface EngineHooks {
  /** Supply fresh context (memory recall, environment…) before every turn; never stored. */
  injectors?: InjectionHook[];
  /** Fixed runtimes per agent in place of those the settings name (tests); an agent not in it gets the echo. */
  runtimes?: Map<string, Runtime>;
}

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

function buildModels(configs: Record<string, ModelConfig | TextModel>): Map<string, TextModel> {
  const models = new Map<string, TextModel>();
  for (const [name, m] of Object.entries(configs)) {
    if ("complete" in m) {
      models.set(name, m);
      continue;
    }
    const { provider, ...rest } = m;
    models.set(
      name,
      provider === "openai"
        ? createTextModel({ provider, ...rest, baseUrl: rest.baseUrl ?? DEFAULT_OPENAI_BASE_URL })
        : createTextModel({ provider, ...rest }),
    );
  }
  return models;
}

function modelNamed(name: string, models: Map<string, TextModel>, where: string): TextModel {
  const model = models.get(name);
  if (!model) {
    const known = [...models.keys()].join(", ") || "none";
    throw new SessiondError(
      "CONFIG_INVALID",
      `${where}: no model named ${JSON.stringify(name)} (models: ${known})`,
    );
  }
  return model;
}

/** The summariser named in the config; none: the offline one, on the compaction thread. */
function summarizerOf(
  name: string | undefined,
  models: Map<string, TextModel>,
  thread: CompactionThread,
): Summarizer {
  return name === undefined ? thread.offline : modelSummarizer(modelNamed(name, models, "compaction.model"));
}

const DEFAULT_RECOVER_MAX_AGE_MS = 10 * 60_000;

function withoutMessageId(envelope: Envelope): Envelope {
  const { platformMessageId: _id, ...rest } = envelope;
  return rest;
}

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
  private readonly lanes: Lanes;
  private readonly compactor: Compactor;
  private readonly sweeper: Sweeper;
  private readonly titles: TitleWriter | undefined;
  private readonly lifecycle: PipelineDeps["lifecycle"] & { retention: RetentionPolicy };
  private readonly pipeline: TurnPipeline;
  private readonly resolveRuntime: (agent: string, session?: ModelChoice) => Runtime;
  private readonly turns: TurnQueue;
  private readonly admitted: AdmittedTurns;
  private readonly statuses: TurnStatuses;
  readonly inbox: Inbox | undefined;
  readonly queue: Engine["queue"];
  private readonly echo = echoRuntime();
  private closing?: Promise<void>;

  constructor(private readonly parts: EngineParts) {
    this.store = observedStore(parts.store, this.events, parts.config.lifecycle?.clock ?? systemClock);
    relayForeignAppends(parts.store, this.events);
    this.agents = parts.agents;
    this.resolveRuntime = runtimeResolver(parts.config, (agent) => this.agents.settings.get(agent));
    this.lanes = lanesFor(parts.store, { maxQueue: parts.config.maxQueuedTurns ?? DEFAULT_QUEUE.cap });
    const inLanes: InLanes = (keys, work) => this.lanes.runAll(keys, work);
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
    this.pipeline = new TurnPipeline({
      store: this.store,
      compactor: this.compactor,
      settings: (agent, session) => this.settings(agent, session),
      durabilityOf: (agent) => parts.config.agentOptions?.[agent]?.durability ?? "strict",
      injectors: parts.injectors,
      afterTurn: (key, session) => this.titles?.afterTurn(key, session),
      onProgress: (key, progress) => this.admitted.watch(key, progress),
      lifecycle: this.lifecycle,
    });
    this.sweeper = new Sweeper({
      store: this.store,
      policy: this.lifecycle.policy,
      retention: this.lifecycle.retention,
      keepArchive: this.lifecycle.keepArchive,
      clock: this.lifecycle.clock,
      inLanes,
      apply: (session) =>
        this.lanes.run(session.key, () =>
          resetIfDue(this.store, session.key, this.lifecycle.policy, this.lifecycle.clock.now(), {
            keepArchive: this.lifecycle.keepArchive,
          }),
        ),
      onError: () => {
        // A failed sweep is tried again at the next interval; the gateway logs it when it has a logger.
      },
    });
    this.turns = new TurnQueue({
      timer: lifecycle.timer ?? systemTimer,
      now: () => this.lifecycle.clock.now(),
      settings: (route) => this.queueSettings(route.key, route.agent),
      execute: (batch) => this.execute(batch),
      dropped: async (route, texts) => {
        await this.pipeline.note(route, "QUEUE_DROPPED", summaryOf(texts)).catch(() => {
          // The dropped callers were told; a note that cannot be written changes nothing for them.
        });
      },
    });
    this.queue = { list: () => this.turns.list(), cancel: (id) => this.turns.cancel(id) };
    this.inbox = parts.inbox;
    const now = () => this.lifecycle.clock.now();
    this.statuses = new TurnStatuses(now, parts.config.turns?.resultsMaxBytes);
    this.admitted = new AdmittedTurns({
      admission: parts.inbox && new Admission(parts.inbox, now),
      queue: this.turns,
      statuses: this.statuses,
      store: this.store,
      now,
      recoverMaxAgeMs: parts.config.turns?.recoverMaxAgeMs ?? DEFAULT_RECOVER_MAX_AGE_MS,
      route: (envelope) => this.route(envelope),
      runnerFor: (envelope) => this.agentRunner(envelope, {}),
      note: async (key, entry) => {
        await this.lanes.run(key, () => this.append(key, [{ ...entry, ts: now() }]));
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
        return resolveSettings({ session: session.overrides, ...this.inherited(session.agent) });
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
    validateKey(key);
    const { limit, before, includeArchived } = options;
    const generations = includeArchived
      ? await this.store.generations(key)
      : [await this.store.getSession(key)].filter((s): s is Session => s !== undefined);
    if (generations.length === 0) throw sessionNotFound(key);
    const pages: Entry[][] = [];
    let remaining = limit ?? Number.POSITIVE_INFINITY;
    for (const [i, session] of generations.entries()) {
      if (remaining <= 0) break;
      const range = {
        order: "desc" as const,
        ...(i === 0 && before !== undefined ? { beforeSeq: before } : {}),
        ...(Number.isFinite(remaining) ? { limit: remaining } : {}),
      };
      const page = await this.store.readEntries(session.id, range);
      remaining -= page.length;
      pages.push(page.reverse());
    }
    return pages.reverse().flat();
  }

  context(key: string): Promise<StoredContext | undefined> {
    return this.store.loadContext(validateKey(key));
  }

  compact(key: string, options: { signal?: AbortSignal } = {}): Promise<CompactResult> {
    validateKey(key);
    return this.lanes.run(key, async () => {
      const context = await this.store.loadContext(key);
      if (!context) throw sessionNotFound(key);
      const settings = this.settings(context.session.agent, context.session);
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
    return this.lanes.idle(validateKey(key));
  }

  reset(key: string, cause: ResetCause = "manual"): Promise<ResetResult> {
    validateKey(key);
    return this.lanes.run(key, () => this.store.reset(key, cause));
  }

  delete(key: string): Promise<DeleteResult> {
    validateKey(key);
    return this.lanes.run(key, async () => {
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
      inLane: (work) => this.lanes.run(key, work),
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
    return this.admitted.submit(route, envelope, this.agentRunner(envelope, options), options.signal, true)
      .result;
  }

  turnWith(envelope: Envelope, run: TurnRunner, options: TurnOptions = {}): Promise<TurnResult> {
    const route = this.route(envelope);
    const command = parseQueueCommand(envelope.text);
    if (command) return this.queueCommand(route, command);
    // A runner of the caller's cannot run again after a restart: only agent turns are admitted.
    return this.admitted.submit(route, envelope, run, options.signal, false).result;
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
    const turn = this.admitted.submit(
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
    return this.admitted.recover(onTakeOver);
  }

  turnStatus(id: string): Promise<TurnStatus | EvictedTurn | undefined> {
    return this.admitted.status(id);
  }

  running(): RunningTurn[] {
    return this.statuses.runningTurns(this.parts.config.turns?.stuckAfterMs ?? DEFAULT_STUCK_AFTER_MS);
  }

  abort(id: string): "cancelled" | "aborted" | undefined {
    return this.admitted.abort(id);
  }

  /** One batch of the queue as one turn, in the key's lane: coalesced inputs stored first. */
  private execute(batch: Batch): Promise<TurnResult> {
    const { route } = batch;
    const { key, agent } = route;
    let replied!: (result: TurnResult) => void;
    const reply = new Promise<TurnResult>((resolve) => {
      replied = resolve;
    });
    const lane = this.lanes.run(key, async () => {
      this.events.emit({ type: "turn.started", key, agent });
      let result: TurnResult;
      try {
        await this.admitted.ready(key, batch.ids);
        if (batch.summary !== undefined) {
          await this.pipeline.record(route, { ...withoutMessageId(batch.input), text: batch.summary });
        }
        for (const earlier of batch.context) await this.pipeline.record(route, earlier);
        const steering = {
          pending: batch.steering.pending,
          wait: batch.steering.wait,
          take: async (accept: (envelope: Envelope) => boolean) => {
            const taken = batch.steering.take(accept);
            if (taken.length === 0) return [];
            const stored = await this.admitted.joined(taken.map((input) => input.id));
            return taken.filter((_, i) => stored[i]).map((input) => input.envelope);
          },
        };
        result = await this.pipeline.run(route, batch.input, batch.run, batch.signal, steering);
        this.events.emit({ type: "turn.finished", key, agent, ok: true });
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        this.events.emit({ type: "turn.finished", key, agent, ok: false, error: message });
        throw error;
      }
      replied(result);
      // The reply is out; still in the lane, so the next turn on the key runs on the compacted context.
      await this.pipeline.compactAfter(route, result);
    });
    return Promise.race([reply, lane.then(() => reply)]);
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
      const current = (await this.queueSettings(key, route.agent)).mode;
      notice =
        command.raw === ""
          ? `Queue mode: ${current}. Modes: ${modes}.`
          : `Unknown queue mode ${JSON.stringify(command.raw)}; modes: ${modes}.`;
    } else {
      await this.lanes.run(key, () =>
        this.pipeline.note(route, "QUEUE_MODE", `Queue mode set to ${command.mode}.`),
      );
      await this.changeOverrides(key, [["queue.mode", command.mode]]);
      notice = `Queue mode: ${command.mode}.`;
    }
    const session = await this.store.getSession(key);
    return { key, sessionId: session?.id ?? "", deduplicated: false, notice };
  }

  /** A key's queue settings: the session's overrides, then its agent's, then the defaults. */
  private async queueSettings(key: string, agent: string): Promise<QueueSettings> {
    const session = await this.store.getSession(key);
    const layers = { ...(session ? { session: session.overrides } : {}), ...this.inherited(agent) };
    const value = <N extends "queue.mode" | "queue.debounce_ms" | "queue.cap" | "queue.drop">(name: N) =>
      resolveSetting(name, layers).value;
    return {
      mode: value("queue.mode") ?? DEFAULT_QUEUE.mode,
      debounceMs: value("queue.debounce_ms") ?? DEFAULT_QUEUE.debounceMs,
      cap: value("queue.cap") ?? DEFAULT_QUEUE.cap,
      drop: value("queue.drop") ?? DEFAULT_QUEUE.drop,
    };
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
    return agentRunner(
      {
        runtimeFor: (agent, session) => this.runtimeFor(agent, session),
        permissionFor: (agent, key) => this.agents.permissionFor(agent, key),
        store: this.agents.store,
        agents: this.routing.agents,
        settled: () => this.agents.settled(),
      },
      { ...(tools ? { tools } : {}), ...(onEvent ? { onEvent: (event) => onEvent(event) } : {}) },
    );
  }

  record(envelope: Envelope): Promise<AppendResult> {
    const route = this.route(envelope);
    return this.lanes.run(route.key, () => this.pipeline.record(route, envelope));
  }

  queued(): Map<string, number> {
    const depths = this.lanes.active();
    for (const [key, n] of this.turns.depths()) depths.set(key, Math.max(n, depths.get(key) ?? 0));
    return depths;
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
      applied: await applyRetention(this.store, plan, (keys, work) => this.lanes.runAll(keys, work)),
    };
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      await this.sweeper.stop();
      await this.admitted.close();
      await this.turns.drain();
      await this.lanes.drain();
      await this.titles?.drain();
      await this.parts.inbox?.close();
      // Before the store: a PostgreSQL store's runtime sessions write on its pool.
      if (this.parts.config.runtimeSessions === undefined) await this.agents.store.close();
      // Flushed either way; closed only when the engine opened it.
      if (this.parts.ownsStore) await this.store.close();
      else await this.store.sync();
      await this.parts.thread.close();
    })();
    return this.closing;
  }

  /** What a session of this agent has when it overrides nothing: the agent's settings, then the defaults. */
  private inherited(agent: string): InheritedLayers {
    const { config } = this.parts;
    const options = config.agentOptions?.[agent];
    const { model: _m, summarizer: _s, ...compaction } = config.compaction ?? {};
    return {
      agent: {
        ...compactionOverrides(options?.compaction),
        ...queueOverrides(options?.queue),
        ...(options?.model ? { model: options.model } : {}),
      },
      defaults: {
        ...compactionOverrides({ ...DEFAULT_COMPACTION, ...compaction }),
        ...queueOverrides({
          ...DEFAULT_QUEUE,
          cap: config.maxQueuedTurns ?? DEFAULT_QUEUE.cap,
          ...config.queue,
        }),
      },
    };
  }

  private changeOverrides(
    key: string,
    changes: Array<[string, OverrideValue | null]>,
  ): Promise<OverrideChange[]> {
    validateKey(key);
    return this.lanes.run(key, async () => {
      const session = await this.store.getSession(key);
      if (!session) throw sessionNotFound(key);
      const inherited = this.inherited(session.agent);
      const overrides = { ...session.overrides };
      const patch: Record<string, OverrideValue | null> = {};
      const result: OverrideChange[] = [];
      for (const [name, value] of changes) {
        if (value !== null) this.checkConfigured(session.agent, name, value);
        const plan = planOverrideChange({ overrides }, name, value, inherited);
        for (const [field, v] of Object.entries(plan.patch.overrides)) {
          patch[field] = v;
          if (v === null) delete overrides[field];
          else overrides[field] = v;
        }
        result.push({ name, effect: plan.effect, effective: plan.effective });
      }
      // Cross-field rules (keep_recent below max_messages) are checked on the result before it is stored.
      this.settings(session.agent, { ...session, overrides });
      await this.store.updateSession(key, { overrides: patch });
      return result;
    });
  }

  /**
   * A session's `model` or `provider` must be one the config has (for agents that call a model endpoint;
   * Claude Code and Codex take their own model names): refused when set, with the list of what is.
   */
  private checkConfigured(agent: string, name: string, value: OverrideValue): void {
    if (name !== "model" && name !== "provider") return;
    const runtime =
      this.agents.settings.get(agent)?.runtime ?? this.parts.config.agentOptions?.[agent]?.runtime;
    if (!usesModelEndpoint(runtime)) return;
    const { models } = this.parts;
    const known =
      name === "model" ? [...models.keys()] : [...new Set([...models.values()].map((m) => m.provider))];
    if (known.includes(String(value))) return;
    throw new SessiondError(
      "INVALID_ARGUMENT",
      `${name} ${JSON.stringify(value)} is not configured; configured ${name === "model" ? "models" : "providers"}: ${known.join(", ") || "none"}`,
      { details: { name, known } },
    );
  }

  /** The agent's compaction policy (default < agent < session overrides) and model facts. */
  private settings(agent: string, session: Session): AgentTurnSettings {
    const { config, models } = this.parts;
    const agentOptions = config.agentOptions?.[agent];
    const { model: _m, summarizer: _s, ...base } = config.compaction ?? {};
    const policy = resolveCompactionPolicy(
      { ...DEFAULT_COMPACTION, ...base },
      agentOptions?.compaction,
      session.overrides,
    );
    // Settings edited through `sessiond agents` (agents.json) win over the config file's.
    const layered = this.agents.settings.get(agent);
    const instructions = layered?.instructions ?? agentOptions?.instructions;
    const modelAgent = usesModelEndpoint(layered?.runtime ?? agentOptions?.runtime);
    // The session's own model (or provider) when it has one: its window drives the window trigger.
    const model = modelAgent ? effectiveModelName(session.overrides, models, agentOptions?.model) : undefined;
    const contextWindow = model ? models.get(model)?.contextWindow : undefined;
    return {
      policy,
      // A stateless model run sees the LoCrew window (§4); runtimes that keep a session get their own prompt.
      ...(modelAgent && agentOptions?.model
        ? { window: { self: agent, ...(contextWindow ? { contextWindow } : {}) } }
        : {}),
      ...(contextWindow ? { contextWindow } : {}),
      ...(instructions ? { instructions } : {}),
      ...(agentOptions?.turnTimeoutMs ? { turnTimeoutMs: agentOptions.turnTimeoutMs } : {}),
    };
  }
}
