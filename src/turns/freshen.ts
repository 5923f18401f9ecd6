import type { Route } from "../keys/index.js";
import { hasResetOverride, policyEnabled } from "../lifecycle/reset-policy.js";
import { resetIfDue } from "../lifecycle/sweeper.js";
import { parseResetTrigger } from "../lifecycle/triggers.js";
import type { Envelope } from "../model/envelope.js";
import type { Store } from "../store/store.js";
import { resetUnlessContinued } from "./client-history.js";
import type { TurnResult } from "./turn.js";
import type { TurnLifecycle } from "./turn-deps.js";
import { initOf } from "./turn-entries.js";

export interface Fresh {
  /** The input's text: after a reset trigger, what follows it (empty for a bare `/new`). */
  text: string;
  reset?: NonNullable<TurnResult["reset"]>;
}

/**
 * Before the input is stored: a reset trigger starts a new session (the text after it is the input); a
 * client's history that does not continue the stored one does too; otherwise a scheduled reset that is
 * due happens now, so the message lands in a fresh session.
 */
export async function freshen(
  store: Store,
  lifecycle: TurnLifecycle,
  route: Route,
  envelope: Envelope,
): Promise<Fresh> {
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
