import type { Compactor } from "../compaction/compactor.js";
import type { CompactionPolicy } from "../compaction/policy.js";
import type { AgentDurability } from "../config/engine-config.js";
import type { InjectionHook, WindowOptions } from "../context/index.js";
import type { Clock } from "../lifecycle/clock.js";
import type { ResetPolicy } from "../lifecycle/reset-policy.js";
import type { Session } from "../model/session.js";
import type { Store } from "../store/store.js";

/** What a turn needs to know about its agent, resolved once per session head. */
export interface AgentTurnSettings {
  instructions?: string;
  /** The stateless window (behaviours §4) the history goes through; none: the whole kept history. */
  window?: WindowOptions;
  policy: CompactionPolicy;
  contextWindow?: number;
  /** How long the runtime may run; default `DEFAULT_TURN_TIMEOUT_MS` (10 minutes). */
  turnTimeoutMs?: number;
}

/** The sessions' reset rules a turn applies before its input is stored. */
export interface TurnLifecycle {
  resetTriggers: readonly string[];
  policy: ResetPolicy;
  keepArchive: boolean;
  clock: Clock;
}

/** Everything one turn uses, wired once by the engine. */
export interface TurnDeps {
  store: Store;
  compactor: Compactor;
  settings(agent: string, session: Session): AgentTurnSettings;
  durabilityOf(agent: string): AgentDurability;
  injectors: readonly InjectionHook[];
  lifecycle: TurnLifecycle;
  /**
   * The inbox is the store's own (`StoreInbox`): a turn's end commits with its reply (`AppendOptions.inbox`)
   * instead of as a write of its own after it.
   */
  inboxInStore: boolean;
  /** Called after a turn's reply is stored (titles); must not throw. */
  afterTurn(key: string, session: Session): void;
}
