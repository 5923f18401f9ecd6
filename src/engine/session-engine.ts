import { Compactor } from "../compaction/compactor.js";
import type { ModelChoice } from "../config/effective-model.js";
import { initForKey, type Route, type RoutingConfig, routeEnvelope, validateKey } from "../keys/index.js";
import { systemClock } from "../lifecycle/clock.js";
import type { InLanes } from "../lifecycle/in-lanes.js";
import { nextDue, sessionRule } from "../lifecycle/reset-policy.js";
import { applyRetention, planRetention } from "../lifecycle/retention.js";
import { type ErasureReceipt, SubjectErasure } from "../lifecycle/subject-erasure.js";
import { resetIfDue, Sweeper, type SweepReport } from "../lifecycle/sweeper.js";
import { TitleWriter } from "../lifecycle/title-writer.js";
import type { Entry, EntryInput, ResetCause } from "../model/entry.js";
import type { Envelope } from "../model/envelope.js";
import type { Inbox } from "../model/inbox.js";
import type { Runtime } from "../model/runtime.js";
import type { StoredContext } from "../model/session.js";
import type { Summarizer } from "../model/summarizer.js";
import { adminToolsFor } from "../runtimes/admin-tools.js";
import { AgentLoop } from "../runtimes/agent-runner.js";
import { echoRuntime } from "../runtimes/echo.js";
import { runtimeResolver } from "../runtimes/resolve.js";
import type { AgentRuntimes } from "../runtimes/sessions/agent-runtimes.js";
import { type AgentsSession, agentsSession } from "../sdk/agents-session.js";
import { sessionModels } from "../session-models.js";
import { sessionNotFound } from "../store/session-log.js";
import type {
  AppendResult,
  DeleteResult,
  ForkResult,
  ResetResult,
  RewindResult,
  Store,
} from "../store/store.js";
import { observeStore, SessionEvents } from "../turns/events.js";
import { relayForeignAppends } from "../turns/foreign-events.js";
import type { RecoveryReport } from "../turns/inbox-recovery.js";
import { hasLeases } from "../turns/queue-types.js";
import type { SessionActors } from "../turns/session-actors.js";
import type { AgentTurnOptions, TurnOptions, TurnResult, TurnRunner } from "../turns/turn.js";
import type { EvictedTurn, RunningTurn, TurnStatus } from "../turns/turn-status.js";
import type {
  BranchedRuntimes,
  CompactResult,
  Engine,
  EngineAppendOptions,
  EngineForkOptions,
  EngineRewindOptions,
  HistoryOptions,
  PruneResult,
  SessionBranch,
  StartedTurn,
} from "./api.js";
import { type BranchParts, forkIn, rewindIn } from "./branch-operations.js";
import { branchesOf } from "./branches.js";
import { readHistory } from "./history.js";
import { engineIdentity } from "./identity.js";
import { type EngineLifecycle, lifecycleOf } from "./lifecycle.js";
import { type SessionOverrides, sessionOverrides } from "./overrides.js";
import type { EngineParts } from "./parts.js";
import { SessionSettings } from "./session-settings.js";
import { EngineTurns } from "./turns.js";
export class SessionEngine implements Engine {
  readonly store: Store;
  readonly routing: RoutingConfig;
  readonly dataDir: string;
  readonly summarizer: Summarizer;
  readonly events = new SessionEvents();
  readonly sessions: Engine["sessions"];
  readonly overrides: SessionOverrides;
  readonly identity: Engine["identity"];
  private readonly erasure: SubjectErasure;
  readonly agents: AgentRuntimes;
  readonly shares: Engine["shares"];
  private readonly turns: EngineTurns;
  private readonly compactor: Compactor;
  private readonly sweeper: Sweeper;
  private readonly titles: TitleWriter | undefined;
  private readonly lifecycle: EngineLifecycle;
  private readonly resolveRuntime: (agent: string, session?: ModelChoice) => Runtime;
  private readonly sessionSettings: SessionSettings;
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
    this.shares = parts.shares;
    this.sessionSettings = new SessionSettings(parts.config, parts.models, (agent) =>
      this.agents.settings.get(agent),
    );
    this.loop = new AgentLoop({
      runtimeFor: (agent, session) => this.runtimeFor(agent, session),
      permissionFor: (agent, key) => this.agents.permissionFor(agent, key),
      store: this.agents.store,
      agents: parts.routing.agents,
      settled: () => this.agents.settled(),
      ledger: this.agents.ledger,
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
    this.lifecycle = lifecycleOf(parts.config);
    // A compaction entry is derived from the archive, so it needs no fsync of its own: a crash before the
    // next durable commit only means compacting again (later commits are ordered after it).
    this.compactor = new Compactor(
      { default: parts.summarizer, of: (session) => perSession.summarizer(session) },
      (key, entries, options) => this.store.append(key, entries, { ...options, durability: "relaxed" }),
      () => this.lifecycle.clock.now(),
      parts.thread,
    );
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
    this.inbox = parts.inbox;
    this.turns = new EngineTurns({
      store: this.store,
      events: this.events,
      inbox: parts.inbox,
      incognito: parts.incognito,
      config: parts.config,
      settings: this.sessionSettings,
      lifecycle: this.lifecycle,
      compactor: this.compactor,
      injectors: parts.injectors,
      afterTurn: (key, session) => this.titles?.afterTurn(key, session),
      route: (envelope) => this.route(envelope),
      refuse: (route, envelope) => this.erasure.check(route, envelope),
      agentRunner: (envelope) => this.agentRunner(envelope, {}),
      append: (key, entries) => this.append(key, entries),
      setQueueMode: (key, mode) => this.overrides.change(key, [["queue.mode", mode]]),
    });
    this.queue = { list: () => this.actors.list(), cancel: (id) => this.actors.cancel(id) };
    const interval = parts.config.lifecycle?.sweepIntervalMs ?? 60_000;
    if (interval > 0) this.sweeper.start(interval);
    this.overrides = sessionOverrides(this.store, this.sessionSettings, (key, work) =>
      this.actors.exclusive(key, work),
    );
    const { identityLinks: links, agents } = parts.routing;
    const afterDelete = (key: string) => this.forgetKeyParts(key);
    const identity = { store: this.store, dataDir: this.dataDir, links, agents, inLanes, afterDelete };
    this.identity = engineIdentity(identity);
    this.erasure = new SubjectErasure({ ...identity, ledger: this.agents.ledger }, this.dataDir);
    this.sessions = {
      list: (query) => this.store.listSessions(query),
      get: (key) => this.store.getSession(validateKey(key)),
      generations: (key) => this.store.generations(validateKey(key)),
      resetDueAt: (session) => {
        const { policy } = this.lifecycle;
        return session.state === "active" ? nextDue(session, sessionRule(session, policy)) : undefined;
      },
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

  fork(key: string, options: EngineForkOptions = {}): Promise<ForkResult & BranchedRuntimes> {
    return forkIn(this.branchParts, key, options);
  }

  rewind(key: string, options: EngineRewindOptions): Promise<RewindResult & BranchedRuntimes> {
    return rewindIn(this.branchParts, key, options);
  }

  private get branchParts(): BranchParts {
    return {
      store: this.store,
      agents: this.agents,
      inLane: (key, work) => this.actors.exclusive(key, work),
      // Here, or (a store shared by gateways) in another gateway, whose input the inbox holds unfinished.
      turnRunsOn: async (key) => {
        if (this.running().some((turn) => turn.key === key)) return true;
        if (!this.inbox || !hasLeases(this.parts.store)) return false;
        return (await this.inbox.unfinished()).some((item) => item.key === key);
      },
    };
  }

  branches(key: string): Promise<SessionBranch[]> {
    return branchesOf(this.store, validateKey(key));
  }

  delete(key: string): Promise<DeleteResult> {
    validateKey(key);
    return this.actors.exclusive(key, async () => {
      const result = await this.store.delete(key);
      if (result.sessions === 0) throw sessionNotFound(key);
      await this.forgetKeyParts(key);
      return result;
    });
  }

  /** Erasure by subject (src/lifecycle/subject-erasure.ts, docs/erasure.md). */
  forget(request: { subject: string }): Promise<ErasureReceipt> {
    return this.erasure.forget(request.subject);
  }

  private async forgetKeyParts(key: string): Promise<void> {
    await this.agents.forgetConversation(key);
    await this.parts.shares.forget(key);
  }

  session(key: string): AgentsSession {
    validateKey(key);
    return agentsSession({
      key,
      inLane: (work) => this.actors.exclusive(key, work),
      context: () => this.store.loadContext(key),
      append: (entries, expectSessionId) => this.append(key, entries, { expectSessionId }),
      reset: async () => {
        if (await this.store.getSession(key)) await this.store.reset(key, "api");
      },
    });
  }

  turn(envelope: Envelope, options: AgentTurnOptions = {}): Promise<TurnResult> {
    return this.turns.turn(
      envelope,
      this.agentRunner(envelope, options),
      options.signal,
      true,
      options.incognito,
    );
  }

  turnWith(envelope: Envelope, run: TurnRunner, options: TurnOptions = {}): Promise<TurnResult> {
    // A runner of the caller's cannot run again after a restart: only agent turns are admitted.
    return this.turns.turn(envelope, run, options.signal, false, options.incognito);
  }

  start(envelope: Envelope, options: AgentTurnOptions = {}): Promise<StartedTurn> {
    return this.turns.start(envelope, this.agentRunner(envelope, options), options.signal, options.incognito);
  }

  isIncognito(key: string): boolean {
    return this.parts.incognito.has(key);
  }

  recover(onTakeOver?: (report: RecoveryReport) => void): Promise<RecoveryReport> {
    return this.turns.recover(onTakeOver);
  }

  turnStatus(id: string): Promise<TurnStatus | EvictedTurn | undefined> {
    return this.turns.status(id);
  }

  running(): RunningTurn[] {
    return this.turns.running();
  }

  abort(id: string): "cancelled" | "aborted" | undefined {
    return this.actors.abort(id);
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
    return this.turns.record(envelope);
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
      await this.turns.close();
      await this.titles?.drain();
      await this.parts.inbox?.close();
      // Before the store: a PostgreSQL store's runtime sessions write on its pool.
      if (this.parts.config.runtimeSessions === undefined) await this.agents.store.close();
      await this.agents.ledger.close();
      await this.parts.shares.close();
      // Flushed either way; closed only when the engine opened it.
      if (this.parts.ownsStore) await this.store.close();
      else await this.store.sync();
      await this.parts.thread.close();
      this.stopObserving();
    })();
    return this.closing;
  }

  private get actors(): SessionActors {
    return this.turns.actors;
  }
}
