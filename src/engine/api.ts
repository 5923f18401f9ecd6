import type { ModelChoice } from "../config/effective-model.js";
import type { InjectionHook } from "../context/index.js";
import type { Route, RoutingConfig } from "../keys/index.js";
import type { ForgetResult, IdentityLinkCheck } from "../lifecycle/identity-changes.js";
import type { OverridePlan, ResolvedSetting } from "../lifecycle/overrides.js";
import type { RetentionPlan, RetentionResult } from "../lifecycle/retention.js";
import type { ErasureReceipt } from "../lifecycle/subject-erasure.js";
import type { SweepReport } from "../lifecycle/sweeper.js";
import type { CompactionEntry, Entry, EntryInput, ResetCause } from "../model/entry.js";
import type { Envelope } from "../model/envelope.js";
import type { Inbox } from "../model/inbox.js";
import type { Runtime } from "../model/runtime.js";
import type { OverrideValue, Session, SessionInit, StoredContext } from "../model/session.js";
import type { Summarizer } from "../model/summarizer.js";
import type { AgentRuntimes } from "../runtimes/sessions/agent-runtimes.js";
import type { BranchOutcome } from "../runtimes/sessions/branch.js";
import type { AgentsSession } from "../sdk/agents-session.js";
import type { Shares } from "../shares/shares.js";
import type {
  AppendOptions,
  AppendResult,
  DeleteResult,
  ForkResult,
  ResetResult,
  RewindResult,
  SessionPage,
  SessionQuery,
  Store,
} from "../store/store.js";
import type { SessionEvents } from "../turns/events.js";
import type { RecoveryReport } from "../turns/inbox-recovery.js";
import type { QueuedInput } from "../turns/queue-types.js";
import type { AgentTurnOptions, TurnOptions, TurnResult, TurnRunner } from "../turns/turn.js";
import type { EvictedTurn, RunningTurn, TurnStatus } from "../turns/turn-status.js";

export interface HistoryOptions {
  /** At most this many entries: the newest ones. Default: all. */
  limit?: number;
  /** Only entries with a seq below this (in the current session, or in `beforeSession`). */
  before?: number;
  /**
   * With `includeArchived`: the generation (its session id) that `before` counts in; the generations newer
   * than it are left out, so pages can walk back across generations. One that is gone gives no entries.
   */
  beforeSession?: string;
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

export interface EngineForkOptions {
  /** Fork after this entry; default: the newest completed one (a running turn's input and reply are left out). */
  atSeq?: number;
  /**
   * The fork's key; default: a web chat key the dashboard can go on in, `<key>/fork-<id>` for a web chat's
   * key (`admin-…`), else `admin-fork-<id>`.
   */
  toKey?: string;
}

export interface EngineRewindOptions {
  /** The first entry left out: the conversation continues from the entry before it. */
  toSeq: number;
  /** Compare-and-swap: the head (newest seq) the rewind was computed on; moved on → `SESSION_CHANGED`. */
  expectHead?: number;
}

/** What the agents' runtime sessions did on a fork or rewind: agents whose sessions follow it, and those cleared. */
export interface BranchedRuntimes {
  runtimeSessions: BranchOutcome;
}

/** One line of a key's conversation tree (`engine.branches`). */
export interface SessionBranch {
  key: string;
  session: Session;
  /** `current`: the key's conversation now; `rewound`: left by a rewind; `fork`: another key forked from it. */
  kind: "current" | "rewound" | "archived" | "fork";
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
  /**
   * Forks the key's current session: a new key whose history is its entries up to `atSeq` (default: the
   * newest completed one; while a turn runs, the entry before its input). Nothing is copied. The runtime
   * sessions follow where the runtime can fork (Claude Code, Codex), else are left for a fresh start.
   */
  fork(key: string, options?: EngineForkOptions): Promise<ForkResult & BranchedRuntimes>;
  /**
   * Continues the key's conversation from before `toSeq`; what came after stays readable as a branch
   * (`branches`). Waits for a running turn of that key.
   */
  rewind(key: string, options: EngineRewindOptions): Promise<RewindResult & BranchedRuntimes>;
  /** The key's sessions (current, rewound, archived) and the forks taken from them. */
  branches(key: string): Promise<SessionBranch[]>;
  /**
   * Whether the key's sessions live in this process's memory only (a turn asked for `incognito`, or a
   * `session.incognito_for` rule matches it): never exported, shared or searched, gone at restart.
   */
  isIncognito(key: string): boolean;
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
  /**
   * Erases everything of one person across identity links (sessions, archives, forks, runtime sessions,
   * share links, inbox rows, search rows) and has the store rewrite its files without their bytes.
   */
  forget(request: { subject: string }): Promise<ErasureReceipt>;
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
   * Read-only links to one conversation, pinned at its last seq when made; kept where the store keeps its
   * data, so every process on the same store sees (and revokes) the same links (src/shares/).
   */
  readonly shares: Shares;
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
