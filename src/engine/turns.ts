import type { Compactor } from "../compaction/compactor.js";
import type { EngineConfig } from "../config/engine-config.js";
import type { InjectionHook } from "../context/index.js";
import type { IncognitoKeys } from "../incognito/keys.js";
import { storedSessionsOf } from "../incognito/store.js";
import type { Route } from "../keys/index.js";
import { systemTimer } from "../lifecycle/clock.js";
import type { EntryInput } from "../model/entry.js";
import type { Envelope } from "../model/envelope.js";
import { newId } from "../model/ids.js";
import type { Inbox } from "../model/inbox.js";
import { DEFAULT_QUEUE, parseQueueCommand, QUEUE_MODES, type QueueMode } from "../model/queue.js";
import type { Session } from "../model/session.js";
import type { AppendResult, Store } from "../store/store.js";
import { StoreInbox } from "../store/store-inbox.js";
import type { SessionEvents } from "../turns/events.js";
import { InboxRecovery, type RecoveryReport } from "../turns/inbox-recovery.js";
import { hasLeases } from "../turns/queue-types.js";
import { noteOn, recordInput, runTurn } from "../turns/run-turn.js";
import { summaryOf } from "../turns/session-actor.js";
import { SessionActors } from "../turns/session-actors.js";
import type { TurnResult, TurnRunner } from "../turns/turn.js";
import type { TurnDeps } from "../turns/turn-deps.js";
import {
  DEFAULT_STUCK_AFTER_MS,
  type EvictedTurn,
  type RunningTurn,
  statusOfItem,
  type TurnStatus,
  TurnStatuses,
} from "../turns/turn-status.js";
import type { StartedTurn } from "./api.js";
import type { EngineLifecycle } from "./lifecycle.js";
import type { SessionSettings } from "./session-settings.js";

const DEFAULT_RECOVER_MAX_AGE_MS = 10 * 60_000;

export interface EngineTurnsDeps {
  store: Store;
  events: SessionEvents;
  inbox: Inbox | undefined;
  /** Keys kept in memory only: their inputs are never admitted to the inbox. */
  incognito: IncognitoKeys;
  config: EngineConfig;
  settings: SessionSettings;
  lifecycle: EngineLifecycle;
  compactor: Compactor;
  injectors: readonly InjectionHook[];
  /** After a reply is stored (titles). */
  afterTurn(key: string, session: Session): void;
  route(envelope: Envelope): Route;
  /** Throws when the message must not be taken (a redelivery of an erased subject's message). */
  refuse?(route: Route, envelope: Envelope): void;
  /** The agent's runtime as a runner: what an admitted input runs on (after a restart too). */
  agentRunner(envelope: Envelope): TurnRunner;
  /** Appends entries to a key's session (the engine's `append`). */
  append(key: string, entries: EntryInput[]): Promise<AppendResult>;
  /** Sets a session's queue mode (`/queue <mode>`). */
  setQueueMode(key: string, mode: QueueMode): Promise<unknown>;
}

/**
 * The engine's turns: each input to its key's session actor (admitted to the inbox first when it is an
 * agent's), the `/queue` command, the statuses of turns, and recovery of what a crash left in the inbox.
 */
export class EngineTurns {
  readonly actors: SessionActors;
  private readonly statuses: TurnStatuses;
  private readonly recovery: InboxRecovery;
  private readonly turnDeps: TurnDeps;

  constructor(private readonly deps: EngineTurnsDeps) {
    const { config, lifecycle, store } = deps;
    const now = () => lifecycle.clock.now();
    this.turnDeps = {
      store,
      compactor: deps.compactor,
      settings: (agent, session) => deps.settings.turn(agent, session),
      durabilityOf: (agent) => config.agentOptions?.[agent]?.durability ?? "strict",
      injectors: deps.injectors,
      afterTurn: deps.afterTurn,
      lifecycle,
      inboxInStore: deps.inbox instanceof StoreInbox && deps.inbox.store === storedSessionsOf(store),
    };
    this.statuses = new TurnStatuses(now, config.turns?.resultsMaxBytes);
    this.actors = new SessionActors({
      timer: config.lifecycle?.timer ?? systemTimer,
      now,
      inbox: deps.inbox,
      inboxInStore: this.turnDeps.inboxInStore,
      statuses: this.statuses,
      events: deps.events,
      leases: hasLeases(store) ? store.leases : undefined,
      maxLane: config.maxQueuedTurns ?? DEFAULT_QUEUE.cap,
      settings: async (route) => deps.settings.queue(route.agent, await store.getSession(route.key)),
      turn: (batch, watch) => runTurn(this.turnDeps, batch, watch),
      dropped: async (route, texts) => {
        await noteOn(this.turnDeps, route, "QUEUE_DROPPED", summaryOf(texts)).catch(() => {
          // The dropped callers were told; a note that cannot be written changes nothing for them.
        });
      },
    });
    this.recovery = new InboxRecovery({
      inbox: deps.inbox,
      actors: this.actors,
      store,
      now,
      recoverMaxAgeMs: config.turns?.recoverMaxAgeMs ?? DEFAULT_RECOVER_MAX_AGE_MS,
      route: deps.route,
      runnerFor: deps.agentRunner,
      note: async (key, entry) => {
        await this.actors.exclusive(key, () => deps.append(key, [{ ...entry, ts: now() }]));
      },
    });
  }

  /**
   * A turn of `run`; `durable` (an agent's turn) admits its input to the inbox first, unless the key is
   * incognito (`incognito` asks for it; `IncognitoKeys.claim`): then nothing of it is written anywhere.
   */
  turn(
    envelope: Envelope,
    run: TurnRunner,
    signal: AbortSignal | undefined,
    durable: boolean,
    incognito = false,
  ): Promise<TurnResult> {
    const route = this.deps.route(envelope);
    try {
      this.deps.refuse?.(route, envelope);
    } catch (error) {
      return Promise.reject(error);
    }
    const submit = (secret: boolean): Promise<TurnResult> => {
      const command = parseQueueCommand(envelope.text);
      if (command) return this.queueCommand(route, command);
      return this.actors.submit(route, envelope, run, signal, durable && !secret, true).result;
    };
    const claimed = this.deps.incognito.claim(route.key, incognito);
    // Queued before this returns unless the key's first incognito turn must read the store first.
    return typeof claimed === "boolean" ? submit(claimed) : claimed.then(submit);
  }

  /** An agent's turn, answered once its input is admitted (stored in the inbox). */
  async start(
    envelope: Envelope,
    run: TurnRunner,
    signal: AbortSignal | undefined,
    incognito = false,
  ): Promise<StartedTurn> {
    const route = this.deps.route(envelope);
    this.deps.refuse?.(route, envelope);
    // An incognito input is not admitted: answered at once, gone at a restart. Awaited only when the
    // claim must read the store, so a turn is queued in its caller's order.
    const claimed = this.deps.incognito.claim(route.key, incognito);
    const kept = !(typeof claimed === "boolean" ? claimed : await claimed);
    const command = parseQueueCommand(envelope.text);
    if (command) {
      const result = this.queueCommand(route, command);
      return { id: newId(this.deps.lifecycle.clock.now()), key: route.key, result };
    }
    const turn = this.actors.submit(route, envelope, run, signal, kept);
    // The caller that stops waiting here still gets the rejection through `result`.
    turn.result.catch(() => {});
    await turn.stored;
    return { id: turn.id, key: turn.key, result: turn.result };
  }

  /** Stores an inbound message as context only, in its key's lane. */
  async record(envelope: Envelope): Promise<AppendResult> {
    const route = this.deps.route(envelope);
    this.deps.refuse?.(route, envelope);
    const record = () => this.actors.exclusive(route.key, () => recordInput(this.turnDeps, route, envelope));
    const claimed = this.deps.incognito.claim(route.key, false);
    return typeof claimed === "boolean" ? record() : claimed.then(record);
  }

  recover(onTakeOver?: (report: RecoveryReport) => void): Promise<RecoveryReport> {
    return this.recovery.recover(onTakeOver);
  }

  async status(id: string): Promise<TurnStatus | EvictedTurn | undefined> {
    const known = this.statuses.get(id);
    if (known) return known;
    const item = await this.deps.inbox?.get(id);
    return item && statusOfItem(item);
  }

  running(): RunningTurn[] {
    return this.statuses.runningTurns(this.deps.config.turns?.stuckAfterMs ?? DEFAULT_STUCK_AFTER_MS);
  }

  /** Stops taking over other processes' inputs, then waits for every turn and lane to finish. */
  async close(): Promise<void> {
    await this.recovery.close();
    await this.actors.drain();
  }

  /** `/queue <mode>`: sets the session's queue mode (a note records it); `/queue` alone says the current one. */
  private async queueCommand(
    route: Route,
    command: NonNullable<ReturnType<typeof parseQueueCommand>>,
  ): Promise<TurnResult> {
    const { store, settings } = this.deps;
    const { key } = route;
    const modes = QUEUE_MODES.join(", ");
    let notice: string;
    if (command.mode === undefined) {
      const current = settings.queue(route.agent, await store.getSession(key)).mode;
      notice =
        command.raw === ""
          ? `Queue mode: ${current}. Modes: ${modes}.`
          : `Unknown queue mode ${JSON.stringify(command.raw)}; modes: ${modes}.`;
    } else {
      const { mode } = command;
      await this.actors.exclusive(key, () =>
        noteOn(this.turnDeps, route, "QUEUE_MODE", `Queue mode set to ${mode}.`),
      );
      await this.deps.setQueueMode(key, mode);
      notice = `Queue mode: ${mode}.`;
    }
    const session = await store.getSession(key);
    return { key, sessionId: session?.id ?? "", deduplicated: false, notice };
  }
}
