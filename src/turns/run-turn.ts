import { measureContext } from "../compaction/trigger.js";
import { collectInjected } from "../context/index.js";
import type { Route } from "../keys/index.js";
import type { MessageEntry } from "../model/entry.js";
import type { Envelope } from "../model/envelope.js";
import { isSessiondError, SessiondError } from "../model/errors.js";
import type { StoredContext } from "../model/session.js";
import { redactSecrets } from "../secrets/redact.js";
import { sessionNotFound } from "../store/session-log.js";
import type { AppendResult } from "../store/store.js";
import { tracedTurn } from "../tracing/spans.js";
import { endsWithReply } from "./admission.js";
import { DEFAULT_TURN_TIMEOUT_MS, stopped, timedOut, turnDeadline, untilDeadline } from "./deadline.js";
import { freshen } from "./freshen.js";
import type { ActorBatch, TurnDone } from "./queue-types.js";
import { TurnProgress, type TurnReply, type TurnResult } from "./turn.js";
import { steeringOf, turnContext } from "./turn-context.js";
import type { TurnDeps } from "./turn-deps.js";
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
import { compactAfter, compactedSinceLastTurn, compactFirst, overLimits } from "./turn-limits.js";

/**
 * One turn, in its key's lane, top to bottom: the inputs coalesced into it and the fresh-session check;
 * the input stored (idempotent: an answered redelivery returns its reply); the context, compacted first
 * when it is over the agent's limits; the runtime under its deadline; the reply stored. Compaction the
 * reply made due is left for `after`, once the caller has the result.
 */
export async function runTurn(
  deps: TurnDeps,
  batch: ActorBatch,
  watch: (progress: TurnProgress) => void,
): Promise<TurnDone> {
  const { store, lifecycle } = deps;
  const { route, input: envelope, signal } = batch;
  const { key } = route;
  if (batch.summary !== undefined) {
    await recordInput(deps, route, { ...withoutMessageId(envelope), text: batch.summary });
  }
  for (const earlier of batch.context) await recordInput(deps, route, earlier);
  if (signal.aborted) throw cancelled(key);

  const fresh = await freshen(store, lifecycle, route, envelope);
  if (fresh.text === "") {
    const current = await store.getSession(key);
    const result: TurnResult = {
      key,
      sessionId: current?.id ?? "",
      ...(current ? { generation: current.generation } : {}),
      deduplicated: false,
      notice: "Started a new session.",
      ...(fresh.reset ? { reset: fresh.reset } : {}),
    };
    return { result };
  }
  const durability = deps.durabilityOf(route.agent);
  // An admission left for this commit (session-actors.ts) makes it durable: the input is acknowledged by it.
  const admits = batch.items.flatMap((item) => item.admission?.deferred?.write ?? []);
  const appended = await store.append(
    key,
    [{ ...inputEntry(envelope, fresh.text), ts: lifecycle.clock.now() }],
    {
      init: initOf(route),
      durability: admits.length > 0 ? "strict" : inputDurability(durability, fresh.text),
      ...(admits.length > 0 ? { inbox: () => admits } : {}),
    },
  );
  for (const item of batch.items) item.admission?.deferred?.settle(true);
  const input = appended.entries[0] as MessageEntry;
  if (!appended.created[0]) {
    const later = await store.readEntries(input.sessionId, { afterSeq: input.seq });
    const reply = later.find((e): e is MessageEntry => e.type === "message" && e.replyTo === input.id);
    if (reply) return { result: { key, sessionId: input.sessionId, input, reply, deduplicated: true } };
  }

  const loaded = await store.loadContext(key);
  if (!loaded) throw sessionNotFound(key);
  const settings = deps.settings(route.agent, loaded.session);
  const loadedSize = measureContext(loaded);
  const first = overLimits(loadedSize, settings)
    ? await compactFirst(store, deps.compactor, key, loaded, settings, signal)
    : { context: loaded };
  const stored = first.context;
  const compacted = first.entry ?? compactedSinceLastTurn(stored, input);

  // A runtime that hangs past the deadline is aborted and no longer waited for: the lane is freed.
  const deadline = turnDeadline(key, batch.controller, settings.turnTimeoutMs ?? DEFAULT_TURN_TIMEOUT_MS);
  const progress = new TurnProgress(() => lifecycle.clock.now());
  const steered = { stored: 0 };
  let reply: TurnReply;
  let running: Promise<TurnReply | string> | undefined;
  try {
    const injected =
      deps.injectors.length === 0
        ? []
        : (
            await collectInjected(deps.injectors, {
              key,
              agent: route.agent,
              session: stored.session,
              signal,
            })
          ).injected;
    const context = turnContext(route, stored, input, settings, injected, signal);
    context.progress = progress;
    context.steering = steeringOf(deps, route, input, batch.steering, steered);
    watch(progress);
    running = tracedTurn(envelope, route.agent, input.sessionId, () => batch.run(context));
    const out = await untilDeadline(running, signal);
    reply = typeof out === "string" ? { content: out } : out;
    // A reply that was complete when a newer message interrupted it is kept whole.
    if (signal.aborted && !interrupted(signal) && !timedOut(signal)) throw cancelled(key);
  } catch (error) {
    deadline.clear();
    // Past the deadline the runtime was aborted: it gets a moment to stop (and record what it must).
    if (running && isSessiondError(error, "TURN_TIMEOUT")) await stopped(running);
    throw await failed(deps, route, input, progress, signal, error);
  }
  deadline.clear();

  // The reply's commit also makes the turn's earlier relaxed entries durable (one fsync covers the WAL).
  // On the input's session: a reset, relink or forget since (another process's too) fails it with
  // SESSION_CHANGED rather than let it land in the next generation.
  // The inputs' inbox rows end with the reply, in its transaction, when the inbox is the store's own.
  const now = lifecycle.clock.now();
  const ends = deps.inboxInStore ? endsWithReply(batch.items, now) : undefined;
  const saved = await store.append(
    key,
    replyEntries(route, input, reply).map((e) => ({ ...e, ts: now })),
    {
      durability: durability === "relaxed" ? "relaxed" : "strict",
      expectSessionId: input.sessionId,
      ...(ends ? { inbox: ends } : {}),
    },
  );
  if (ends) for (const item of batch.items) if (item.admission?.stored) item.admission.ended = true;
  deps.afterTurn(key, saved.session);
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
  // The context the turn held lacks steers stored mid-turn: then it is loaded again.
  const known: StoredContext | undefined =
    steered.stored > 0
      ? undefined
      : {
          session: saved.session,
          entries: [...stored.entries, ...saved.entries],
          ...(stored.summary ? { summary: stored.summary } : {}),
        };
  // Known within the limits: nothing to compact, nothing to leave for after the reply.
  if (known) {
    const before = first.context === loaded ? loadedSize : measureContext(stored);
    const added = measureContext({ entries: saved.entries });
    const size = { messages: before.messages + added.messages, tokens: before.tokens + added.tokens };
    if (!overLimits(size, settings)) return { result };
  }
  return {
    result,
    after: () => compactAfter(store, deps.compactor, key, input.sessionId, settings, known),
  };
}

/** Stores an inbound message as context only, with no turn (a group message not addressed to the bot). */
export function recordInput(deps: TurnDeps, route: Route, envelope: Envelope): Promise<AppendResult> {
  const entry = { ...inputEntry(envelope, envelope.text), ts: deps.lifecycle.clock.now() };
  return deps.store.append(route.key, [entry], {
    init: initOf(route),
    durability: inputDurability(deps.durabilityOf(route.agent), envelope.text),
  });
}

/** Stores a note on the route's session (creating it): what the queue did with an input. */
export function noteOn(deps: TurnDeps, route: Route, code: string, text: string): Promise<AppendResult> {
  const entry = { type: "note", level: "info", code, text, ts: deps.lifecycle.clock.now() } as const;
  return deps.store.append(route.key, [entry], { init: initOf(route) });
}

/** Records how the runtime ended without a reply and gives the error the caller gets. */
async function failed(
  deps: TurnDeps,
  route: Route,
  input: MessageEntry,
  progress: TurnProgress,
  signal: AbortSignal,
  error: unknown,
): Promise<unknown> {
  const { store, lifecycle } = deps;
  if (interrupted(signal)) {
    await recordInterrupted(store, lifecycle.clock, route, input, progress.text, byOperator(signal));
    return signal.reason;
  }
  await recordFailure(store, route.key, input, error);
  if (isSessiondError(error)) return error;
  // The runtime's text may echo a key (a provider's error, a CLI's stderr): it reaches clients and logs.
  return new SessiondError(
    "TURN_FAILED",
    `the turn on ${route.key} failed: ${redactSecrets(messageOf(error))}`,
    {
      cause: error,
    },
  );
}

function withoutMessageId(envelope: Envelope): Envelope {
  const { platformMessageId: _id, ...rest } = envelope;
  return rest;
}

function cancelled(key: string): SessiondError {
  return new SessiondError("TURN_CANCELLED", `the turn on ${key} was cancelled`);
}
