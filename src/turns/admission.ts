import type { Envelope } from "../model/envelope.js";
import { isSessiondError } from "../model/errors.js";
import type { AdmitInput, InboxOutcome, InboxState } from "../model/inbox.js";
import { redactEnvelope } from "../secrets/index.js";
import type { InboxWrite } from "../store/driver.js";
import type { AppendResult } from "../store/store.js";
import type { ActorItem } from "./queue-types.js";
import type { TurnResult } from "./turn.js";

/** The idempotency key of an admitted input's user entry when its platform gave it no message id. */
export function admittedMessageId(id: string): string {
  return `inbox:${id}`;
}

/** The idempotency key the user entry of an inbox item's turn carries. */
export function inputKeyOf(item: { id: string; envelope: Envelope }): string {
  return item.envelope.platformMessageId ?? admittedMessageId(item.id);
}

/** The inbox row of an input admitted as `id` on `key`: scrubbed as its user entry will be. */
export function admissionOf(id: string, key: string, envelope: Envelope, at: number): AdmitInput {
  const messageId = envelope.platformMessageId;
  return {
    id,
    key,
    envelope: redactEnvelope(envelope),
    ...(messageId ? { dedupeKey: `${key}\n${messageId}` } : {}),
    at,
  };
}

/** The envelope an admitted input's turn runs: keyed like its inbox row when the platform gave no id. */
export function admittedEnvelope(id: string, envelope: Envelope): Envelope {
  return envelope.platformMessageId ? envelope : { ...envelope, platformMessageId: admittedMessageId(id) };
}

/** How an admitted input's turn ended, as its inbox row records it. */
export function inboxEnd(outcome: { result: TurnResult } | { error: unknown }): [InboxState, InboxOutcome] {
  return "result" in outcome ? done(outcome.result) : ended(outcome.error);
}

function done(result: TurnResult): [InboxState, InboxOutcome] {
  return ["done", doneOutcome(result.sessionId, result.reply?.id, result.notice)];
}

/** What an answered input's inbox row keeps. */
export function doneOutcome(sessionId: string, replyId?: string, notice?: string): InboxOutcome {
  return {
    sessionId,
    ...(replyId ? { replyId } : {}),
    ...(notice ? { notice } : {}),
  };
}

/** The end writes of a turn's admitted inputs, committed with its reply (`AppendOptions.inbox`). */
export function endsWithReply(
  items: readonly ActorItem[],
  at: number,
): ((appended: AppendResult) => InboxWrite[]) | undefined {
  const ids = items.filter((i) => i.admission?.stored === true).map((i) => i.id);
  if (ids.length === 0) return undefined;
  return (appended) => {
    const reply = appended.entries[0];
    const outcome = doneOutcome(appended.session.id, reply?.id);
    return ids.map((id) => ({ kind: "end", id, state: "done", at, outcome }));
  };
}

function ended(error: unknown): [InboxState, InboxOutcome] {
  const code = isSessiondError(error) ? error.code : "TURN_FAILED";
  const message = error instanceof Error ? error.message : String(error);
  return [stateOfError(code), { error: { code, message } }];
}

/** The end state of a turn that threw with this code. */
export function stateOfError(code: string): InboxState {
  switch (code) {
    case "TURN_CANCELLED":
      return "cancelled";
    case "TURN_INTERRUPTED":
      return "interrupted";
    case "QUEUE_DROPPED":
    case "SESSION_BUSY":
      return "dropped";
    default:
      return "failed";
  }
}
