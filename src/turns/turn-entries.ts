import { runtimeCompactionNote } from "../compaction/runtime-note.js";
import type { AgentDurability } from "../config/engine-config.js";
import { recordToolCalls, redactSecrets } from "../context/index.js";
import type { Route } from "../keys/index.js";
import type { Clock } from "../lifecycle/clock.js";
import type { EntryInput, MessageEntry } from "../model/entry.js";
import type { Envelope } from "../model/envelope.js";
import { isSessiondError } from "../model/errors.js";
import type { SessionInit } from "../model/session.js";
import type { Durability, Store } from "../store/store.js";
import type { TurnReply } from "./turn.js";

/** ZeroClaw's AUTOSAVE_MIN_MESSAGE_CHARS: a user message this long is worth an immediate fsync. */
export const MEANINGFUL_MESSAGE_CHARS = 20;

/** The user entry of an inbound message, keyed by its platform message id when it has one. */
export function inputEntry(envelope: Envelope, text: string): EntryInput {
  return {
    type: "message",
    role: "user",
    content: text,
    sender: envelope.sender,
    ...(envelope.parts ? { parts: envelope.parts } : {}),
    ...(envelope.platformMessageId ? { idempotencyKey: envelope.platformMessageId } : {}),
  };
}

/** How the input's append is made durable: `meaningful` syncs only a message long enough to be worth it. */
export function inputDurability(durability: AgentDurability, text: string): Durability {
  if (durability === "meaningful") return [...text].length >= MEANINGFUL_MESSAGE_CHARS ? "strict" : "relaxed";
  return durability;
}

/** What a session the route's first message creates is made of. */
export function initOf(route: Route): SessionInit {
  return { agent: route.agent, channel: route.channel, chatType: route.chatType, createdBy: route.createdBy };
}

/** What a turn stores after its input: the reply, its usage, a note of a compaction the runtime made. */
export function replyEntries(route: Route, input: MessageEntry, reply: TurnReply): EntryInput[] {
  const toolCalls = reply.toolCalls?.length ? recordToolCalls(reply.toolCalls) : [];
  const entries: EntryInput[] = [
    {
      type: "message",
      role: "assistant",
      content: reply.content,
      sender: { id: route.agent },
      replyTo: input.id,
      ...(toolCalls.length ? { toolCalls } : {}),
      idempotencyKey: turnEntryKey(input, "reply"),
    },
  ];
  if (reply.usage)
    entries.push({ type: "usage", ...reply.usage, idempotencyKey: turnEntryKey(input, "usage") });
  if (reply.runtimeCompaction) {
    const note = runtimeCompactionNote(route.agent, reply.runtimeCompaction);
    entries.push({ ...note, idempotencyKey: turnEntryKey(input, "runtime-compaction") });
  }
  return entries;
}

/**
 * What a turn stores besides its input is keyed by the input entry (the same entry on every redelivery of
 * a platform message), so a retry of a turn whose writes had an unknown outcome never stores them twice.
 */
function turnEntryKey(input: MessageEntry, what: string): string {
  return `turn:${input.id}:${what}`;
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Whether the interruption was an operator's abort (`engine.abort`) rather than a newer message. */
export function byOperator(signal: AbortSignal): boolean {
  const reason: unknown = signal.reason;
  return isSessiondError(reason) && (reason.details as { by?: string } | undefined)?.by === "operator";
}

/** Whether the turn's signal was aborted by a newer message (queue mode `interrupt`), or an operator. */
export function interrupted(signal: AbortSignal): boolean {
  return signal.aborted && isSessiondError(signal.reason, "TURN_INTERRUPTED");
}

/** The partial reply of an interrupted turn, stored as it was with a note saying it was cut off. */
export async function recordInterrupted(
  store: Store,
  clock: Clock,
  route: Route,
  input: MessageEntry,
  partial: string,
  operator: boolean,
): Promise<void> {
  const by = operator ? "an operator aborted the turn" : "a newer message interrupted the turn";
  const ts = clock.now();
  const entries: EntryInput[] = [];
  if (partial !== "") {
    entries.push({
      type: "message",
      role: "assistant",
      content: redactSecrets(partial),
      replyTo: input.id,
      idempotencyKey: `${input.id}:partial`,
      ts,
    });
  }
  entries.push({
    type: "note",
    level: "info",
    code: "TURN_INTERRUPTED",
    text:
      partial === ""
        ? `The turn was stopped before it replied: ${by}.`
        : `The reply above was cut off: ${by}.`,
    idempotencyKey: `${input.id}:interrupted`,
    ts,
  });
  await store.append(route.key, entries, { expectSessionId: input.sessionId }).catch((error: unknown) => {
    // The session changed under the turn (a reset): the partial reply has nowhere to go.
    if (!isSessiondError(error, "SESSION_CHANGED")) throw error;
  });
}

/** A note saying how the turn ended without a reply (failed, cancelled, past its deadline). */
export async function recordFailure(
  store: Store,
  key: string,
  input: MessageEntry,
  error: unknown,
): Promise<void> {
  const code = isSessiondError(error, "TURN_CANCELLED")
    ? "TURN_CANCELLED"
    : isSessiondError(error, "TURN_TIMEOUT")
      ? "TURN_TIMEOUT"
      : "TURN_FAILED";
  const text = `${code}: ${redactSecrets(messageOf(error))}`;
  await store
    .append(key, [{ type: "note", level: "error", code, text, idempotencyKey: turnEntryKey(input, code) }], {
      expectSessionId: input.sessionId,
    })
    .catch((failure: unknown) => {
      // The input's session is gone: there is no place for the note, and the turn's own error stands.
      if (!isSessiondError(failure, "SESSION_CHANGED")) throw failure;
    });
}
