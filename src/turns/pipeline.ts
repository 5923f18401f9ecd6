import type { Compactor } from "../compaction/compactor.js";
import { chooseCut } from "../compaction/cut.js";
import type { CompactionPolicy } from "../compaction/policy.js";
import { dueReason, measureContext } from "../compaction/trigger.js";
import type { AgentDurability } from "../config/engine-config.js";
import {
  assembleContext,
  collectInjected,
  type InjectionHook,
  redactSecrets,
  type WindowOptions,
} from "../context/index.js";
import type { Route } from "../keys/index.js";
import type { Clock } from "../lifecycle/clock.js";
import { hasResetOverride, policyEnabled, type ResetPolicy } from "../lifecycle/reset-policy.js";
import { resetIfDue } from "../lifecycle/sweeper.js";
import { parseResetTrigger } from "../lifecycle/triggers.js";
import type { CompactionEntry, MessageEntry } from "../model/entry.js";
import type { Envelope } from "../model/envelope.js";
import { isSessiondError, SessiondError } from "../model/errors.js";
import type { Session, StoredContext } from "../model/session.js";
import { sessionNotFound } from "../store/session-log.js";
import type { AppendResult, Store } from "../store/store.js";
import { resetUnlessContinued } from "./client-history.js";
import { DEFAULT_TURN_TIMEOUT_MS, stopped, turnDeadline } from "./deadline.js";
import { type SteerSource, steeringOf } from "./steering.js";
import { type TurnContext, TurnProgress, type TurnReply, type TurnResult, type TurnRunner } from "./turn.js";
import {
  byOperator,
  initOf,
  inputDurability,
  inputEntry,
  interrupted,
  messageOf,
  recordFailure,
  recordInterrupted,
  replyEntries,
} from "./turn-entries.js";

/** What the pipeline needs to know about an agent for one turn. */
export interface AgentTurnSettings {
  instructions?: string;
  /** The stateless window (behaviours §4) the history goes through; none: the whole kept history. */
  window?: WindowOptions;
  policy: CompactionPolicy;
  contextWindow?: number;
  /** How long the runtime may run; default `DEFAULT_TURN_TIMEOUT_MS` (10 minutes). */
  turnTimeoutMs?: number;
}

export interface PipelineDeps {
  store: Store;
  compactor: Compactor;
  settings: (agent: string, session: Session) => AgentTurnSettings;
  durabilityOf: (agent: string) => AgentDurability;
  injectors: readonly InjectionHook[];
  lifecycle: {
    resetTriggers: readonly string[];
    policy: ResetPolicy;
    keepArchive: boolean;
    clock: Clock;
  };
  /** Called when a turn's runtime starts, with what it has produced so far (stuck-turn reports). */
  onProgress?: (key: string, progress: TurnProgress) => void;
  /** Called after a turn's reply is stored (titles, events); must not throw. */
  afterTurn: (key: string, session: Session) => void;
}

/**
 * One turn, run inside the key's lane: store the input (idempotent), assemble the context with fresh
 * injected context, run, store the reply with its tool calls recorded safely; `compactAfter` then
 * compacts when due, once the reply is out.
 */
export class TurnPipeline {
  /**
   * What a turn left for `compactAfter`: its context with the reply, so it is not loaded again; none when
   * steers were stored mid-turn (the context the turn held lacks them), so it is loaded from the store.
   */
  private readonly after = new WeakMap<
    TurnResult,
    { context?: StoredContext; settings: AgentTurnSettings }
  >();

  constructor(private readonly deps: PipelineDeps) {}

  async run(
    route: Route,
    envelope: Envelope,
    run: TurnRunner,
    signal: AbortSignal,
    steering?: SteerSource,
  ): Promise<TurnResult> {
    if (signal.aborted) throw cancelled(route.key);
    const { store } = this.deps;
    const { key } = route;
    const fresh = await this.freshen(route, envelope);
    if (fresh.text === "") {
      const current = await store.getSession(key);
      return {
        key,
        sessionId: current?.id ?? "",
        ...(current ? { generation: current.generation } : {}),
        deduplicated: false,
        notice: "Started a new session.",
        ...(fresh.reset ? { reset: fresh.reset } : {}),
      };
    }
    const text = fresh.text;
    const durability = this.deps.durabilityOf(route.agent);
    const now = this.deps.lifecycle.clock.now();
    const appended = await store.append(key, [{ ...inputEntry(envelope, text), ts: now }], {
      init: initOf(route),
      durability: inputDurability(durability, text),
    });
    const input = appended.entries[0] as MessageEntry;
    if (!appended.created[0]) {
      const answered = await this.findReply(input);
      if (answered) return { key, sessionId: input.sessionId, input, reply: answered, deduplicated: true };
    }

    const loaded = await this.load(key);
    const settings = this.deps.settings(route.agent, loaded.session);
    const first = await this.compactFirst(key, loaded, settings, signal);
    const stored = first.context;
    const compacted = first.entry ?? compactedSinceLastTurn(stored, input);

    // A runtime that hangs past the deadline is aborted and no longer waited for: the lane is freed.
    const deadline = turnDeadline(key, signal, settings.turnTimeoutMs ?? DEFAULT_TURN_TIMEOUT_MS);
    let reply: TurnReply;
    const progress = new TurnProgress(() => this.deps.lifecycle.clock.now());
    const steered = { stored: 0 };
    try {
      const context = await this.context(route, stored, input, settings, deadline.signal);
      context.progress = progress;
      if (steering) context.steering = steeringOf(this.deps, route, input, steering, steered);
      this.deps.onProgress?.(key, progress);
      const running = run(context);
      const out = await Promise.race([running, deadline.expired]).catch(async (error: unknown) => {
        if (isSessiondError(error, "TURN_TIMEOUT")) await stopped(running);
        throw error;
      });
      reply = typeof out === "string" ? { content: out } : out;
      // A reply that was complete when a newer message interrupted it is kept whole.
      if (signal.aborted && !interrupted(signal)) throw cancelled(key);
    } catch (error) {
      deadline.clear();
      if (interrupted(signal)) {
        await recordInterrupted(
          store,
          this.deps.lifecycle.clock,
          route,
          input,
          progress.text,
          byOperator(signal),
        );
        throw signal.reason;
      }
      await recordFailure(store, key, input, error);
      if (isSessiondError(error)) throw error;
      // The runtime's text may echo a key (a provider's error, a CLI's stderr): it reaches clients and logs.
      throw new SessiondError(
        "TURN_FAILED",
        `the turn on ${key} failed: ${redactSecrets(messageOf(error))}`,
        {
          cause: error,
        },
      );
    }

    deadline.clear();
    // The reply's commit also makes the turn's earlier relaxed entries durable (one fsync covers the WAL).
    const stamped = replyEntries(route, input, reply).map((e) => ({
      ...e,
      ts: this.deps.lifecycle.clock.now(),
    }));
    // Computed on the input's session: a reset, relink or forget since (another process's too) makes
    // this fail with SESSION_CHANGED rather than land in the next generation.
    const saved = await store.append(key, stamped, {
      durability: durability === "relaxed" ? "relaxed" : "strict",
      expectSessionId: input.sessionId,
    });
    this.deps.afterTurn(key, saved.session);
    const result: TurnResult = {
      key,
      sessionId: input.sessionId,
      generation: saved.session.generation,
      input,
      reply: saved.entries[0] as MessageEntry,
      deduplicated: false,
    };
    if (compacted) result.compaction = compacted;
    if (fresh.reset) result.reset = fresh.reset;
    if (steered.stored > 0) {
      this.after.set(result, { settings });
      return result;
    }
    const context: StoredContext = { session: saved.session, entries: [...stored.entries, ...saved.entries] };
    if (stored.summary) context.summary = stored.summary;
    this.after.set(result, { context, settings });
    return result;
  }

  /**
   * After a turn's reply, in the key's lane (the next turn waits for it and runs on the compacted context):
   * compacts the session when due. Never throws: a failed summary is noted in the session (Compactor),
   * and a store that failed here fails the next turn too.
   */
  async compactAfter(route: Route, result: TurnResult): Promise<void> {
    const after = this.after.get(result);
    if (!after) return;
    this.after.delete(result);
    const { settings } = after;
    // A store that fails here fails the next turn too; a reload on another session (a reset since the
    // reply) has nothing of this turn's to compact.
    const context = after.context ?? (await this.deps.store.loadContext(route.key).catch(() => undefined));
    if (context?.session.id !== result.sessionId) return;
    await this.deps.compactor.maybeCompact({
      key: route.key,
      context,
      policy: settings.policy,
      ...(settings.contextWindow ? { contextWindow: settings.contextWindow } : {}),
    });
  }

  /**
   * Before the runtime runs: a context over the agent's limits (an import, `engine.append`, recorded group
   * messages, or a compaction that was still backing off) is compacted now, in the lane, so the model
   * never gets more than the limits allow. When compaction cannot run, the runtime gets the newest
   * entries that fit (the stored history keeps everything).
   */
  private async compactFirst(
    key: string,
    stored: StoredContext,
    settings: AgentTurnSettings,
    signal: AbortSignal,
  ): Promise<{ context: StoredContext; entry?: CompactionEntry }> {
    const { policy, contextWindow } = settings;
    if (!dueReason(measureContext(stored), policy, contextWindow)) return { context: stored };
    const outcome = await this.deps.compactor.maybeCompact({
      key,
      context: stored,
      policy,
      ...(contextWindow ? { contextWindow } : {}),
      signal,
    });
    if (outcome) return { context: await this.load(key), entry: outcome.entry };
    return { context: withinLimits(stored, policy, contextWindow) };
  }

  /** Stores an inbound message as context only, with no turn (a group message not addressed to the bot). */
  record(route: Route, envelope: Envelope): Promise<AppendResult> {
    const entry = { ...inputEntry(envelope, envelope.text), ts: this.deps.lifecycle.clock.now() };
    return this.deps.store.append(route.key, [entry], {
      init: initOf(route),
      durability: inputDurability(this.deps.durabilityOf(route.agent), envelope.text),
    });
  }

  /** Stores a note on the route's session (creating it): what the queue did with an input. */
  note(route: Route, code: string, text: string): Promise<AppendResult> {
    const entry = { type: "note", level: "info", code, text, ts: this.deps.lifecycle.clock.now() } as const;
    return this.deps.store.append(route.key, [entry], { init: initOf(route) });
  }

  /**
   * Before the input is stored: a reset trigger starts a new session (the text after it is the input); a
   * client's history that does not continue the stored one does too; otherwise a scheduled reset that is
   * due happens now, so the message lands in a fresh session.
   */
  private async freshen(
    route: Route,
    envelope: Envelope,
  ): Promise<{ text: string; reset?: NonNullable<TurnResult["reset"]> }> {
    const { store, lifecycle } = this.deps;
    const text = envelope.text;
    const match = parseResetTrigger(text, lifecycle.resetTriggers);
    if (match) {
      const current = await store.getSession(route.key);
      if (!current) return { text: match.rest };
      // A redelivered `/new …` finds its text already opening the session it started: no second reset.
      const first = envelope.platformMessageId
        ? (await store.readEntries(current.id, { limit: 1 }))[0]
        : undefined;
      if (first && first.idempotencyKey === envelope.platformMessageId) return { text: match.rest };
      if (lifecycle.keepArchive) await store.reset(route.key, "trigger", initOf(route));
      else await store.delete(route.key);
      return { text: match.rest, reset: { cause: "trigger", previousSessionId: current.id } };
    }
    if (envelope.clientHistory) {
      const deps = { store, resetTriggers: lifecycle.resetTriggers, keepArchive: lifecycle.keepArchive };
      const reset = await resetUnlessContinued(deps, route.key, initOf(route), envelope.clientHistory);
      if (reset) return { text, reset };
    }
    if (!policyEnabled(lifecycle.policy)) {
      // Off for everyone, but a session may have a reset rule of its own.
      const current = await store.getSession(route.key);
      if (!current || !hasResetOverride(current)) return { text };
    }
    const swept = await resetIfDue(store, route.key, lifecycle.policy, lifecycle.clock.now(), {
      keepArchive: lifecycle.keepArchive,
    });
    return swept ? { text, reset: { cause: swept.cause, previousSessionId: swept.sessionId } } : { text };
  }

  private async context(
    route: Route,
    stored: StoredContext,
    input: MessageEntry,
    settings: AgentTurnSettings,
    signal: AbortSignal,
  ): Promise<TurnContext> {
    const { injected } = await collectInjected(this.deps.injectors, {
      key: route.key,
      agent: route.agent,
      session: stored.session,
      signal,
    });
    // Assembled when a runtime first reads it: the echo and the runtimes that keep their own session never do.
    let assembled: ReturnType<typeof assembleContext> | undefined;
    const assemble = () =>
      (assembled ??= assembleContext({
        ...(settings.instructions ? { instructions: settings.instructions } : {}),
        ...(stored.summary ? { summary: stored.summary } : {}),
        entries: stored.entries,
        injected,
        ...(settings.window ? { window: settings.window } : {}),
      }));
    const context: TurnContext = {
      key: route.key,
      agent: route.agent,
      session: stored.session,
      entries: stored.entries,
      input,
      get messages() {
        return assemble().messages;
      },
      get tokens() {
        return assemble().tokensEstimate;
      },
      signal,
    };
    if (stored.summary) context.summary = stored.summary;
    return context;
  }

  private async load(key: string): Promise<StoredContext> {
    const stored = await this.deps.store.loadContext(key);
    if (!stored) throw sessionNotFound(key);
    return stored;
  }

  private async findReply(input: MessageEntry): Promise<MessageEntry | undefined> {
    const later = await this.deps.store.readEntries(input.sessionId, { afterSeq: input.seq });
    return later.find((e): e is MessageEntry => e.type === "message" && e.replyTo === input.id);
  }
}

/** The newest entries of an over-limit context that are within its limits (at least the input). */
function withinLimits(
  stored: StoredContext,
  policy: CompactionPolicy,
  contextWindow?: number,
): StoredContext {
  const kept = chooseCut(stored.entries, policy.keepRecent)?.kept ?? stored.entries;
  let size = measureContext({ ...(stored.summary ? { summary: stored.summary } : {}), entries: [] });
  let start = kept.length;
  while (start > 0) {
    const next = measureContext({ entries: kept.slice(start - 1, start) });
    const grown = { messages: size.messages + next.messages, tokens: size.tokens + next.tokens };
    if (start < kept.length && dueReason(grown, policy, contextWindow)) break;
    size = grown;
    start--;
  }
  return { ...stored, entries: kept.slice(start) };
}

/** The compaction made after the previous turn's reply: the latest, with no message between it and the input. */
function compactedSinceLastTurn(stored: StoredContext, input: MessageEntry): CompactionEntry | undefined {
  const summary = stored.summary;
  if (!summary) return undefined;
  const since = stored.entries.some((e) => e.seq > summary.seq && e.seq < input.seq && e.type === "message");
  return since ? undefined : (summary as CompactionEntry);
}

function cancelled(key: string): SessiondError {
  return new SessiondError("TURN_CANCELLED", `the turn on ${key} was cancelled`);
}
