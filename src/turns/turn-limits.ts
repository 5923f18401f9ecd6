import type { Compactor } from "../compaction/compactor.js";
import { chooseCut } from "../compaction/cut.js";
import type { CompactionPolicy } from "../compaction/policy.js";
import { type ContextSize, dueReason, measureContext } from "../compaction/trigger.js";
import type { CompactionEntry, MessageEntry } from "../model/entry.js";
import type { StoredContext } from "../model/session.js";
import { sessionNotFound } from "../store/session-log.js";
import type { Store } from "../store/store.js";
import type { AgentTurnSettings } from "./turn-deps.js";

/** Whether a context of this size is over the agent's limits (messages, tokens, the window fraction). */
export function overLimits(size: ContextSize, settings: AgentTurnSettings): boolean {
  return dueReason(size, settings.policy, settings.contextWindow) !== undefined;
}

/**
 * Before the runtime runs: a context over the agent's limits (an import, `engine.append`, recorded group
 * messages, or a compaction that was still backing off) is compacted now, in the lane, so the model
 * never gets more than the limits allow. When compaction cannot run, the runtime gets the newest
 * entries that fit (the stored history keeps everything).
 */
export async function compactFirst(
  store: Store,
  compactor: Compactor,
  key: string,
  stored: StoredContext,
  settings: AgentTurnSettings,
  signal: AbortSignal,
): Promise<{ context: StoredContext; entry?: CompactionEntry }> {
  const { policy, contextWindow } = settings;
  const outcome = await compactor.maybeCompact({
    key,
    context: stored,
    policy,
    ...(contextWindow ? { contextWindow } : {}),
    signal,
  });
  if (outcome) return { context: await loadContext(store, key), entry: outcome.entry };
  return { context: withinLimits(stored, policy, contextWindow) };
}

/**
 * After a turn's reply, in the key's lane (the next turn waits for it and runs on the compacted context):
 * compacts the session when due. Never throws: a failed summary is noted in the session (Compactor), and a
 * store that fails here fails the next turn too. `context` is the turn's own, with its reply; none when
 * steers were stored mid-turn, so it is loaded again. A reload on another session (a reset since the
 * reply) has nothing of this turn's to compact.
 */
export async function compactAfter(
  store: Store,
  compactor: Compactor,
  key: string,
  sessionId: string,
  settings: AgentTurnSettings,
  known: StoredContext | undefined,
): Promise<void> {
  const context = known ?? (await store.loadContext(key).catch(() => undefined));
  if (context?.session.id !== sessionId) return;
  if (!overLimits(measureContext(context), settings)) return;
  await compactor
    .maybeCompact({
      key,
      context,
      policy: settings.policy,
      ...(settings.contextWindow ? { contextWindow: settings.contextWindow } : {}),
    })
    .catch(() => undefined);
}

export async function loadContext(store: Store, key: string): Promise<StoredContext> {
  const stored = await store.loadContext(key);
  if (!stored) throw sessionNotFound(key);
  return stored;
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
export function compactedSinceLastTurn(
  stored: StoredContext,
  input: MessageEntry,
): CompactionEntry | undefined {
  const summary = stored.summary;
  if (!summary) return undefined;
  const since = stored.entries.some((e) => e.seq > summary.seq && e.seq < input.seq && e.type === "message");
  return since ? undefined : (summary as CompactionEntry);
}
