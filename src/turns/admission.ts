import type { Envelope } from "../model/envelope.js";
import { isSessiondError } from "../model/errors.js";
import { newId } from "../model/ids.js";
import type { Inbox, InboxOutcome, InboxState } from "../model/inbox.js";
import { redactEnvelope } from "../secrets/index.js";
import type { TurnResult } from "./turn.js";

/** The idempotency key of an admitted input's user entry when its platform gave it no message id. */
export function admittedMessageId(id: string): string {
  return `inbox:${id}`;
}

/** The idempotency key the user entry of an inbox item's turn carries. */
export function inputKeyOf(item: { id: string; envelope: Envelope }): string {
  return item.envelope.platformMessageId ?? admittedMessageId(item.id);
}

export interface Admitted {
  /** The item's id: the turn's id (`engine.turnStatus`, `GET /api/turns/{id}`). */
  id: string;
  /** The envelope the turn runs: with `platformMessageId` set to the item's key when it had none. */
  envelope: Envelope;
  /** Resolves once the input is durable in the inbox: false when it redelivered one already admitted. */
  stored: Promise<boolean>;
}

/**
 * Stores each agent turn's input in the inbox before the turn is acknowledged, in the order of arrival per
 * key, and records how each ended. The inbox item is keyed like the user entry (the platform message id
 * scoped by session key, else the item's own id), so the input is found again after a crash.
 */
export class Admission {
  /** The last admission of each key still being written: the next one is written after it. */
  private readonly tails = new Map<string, Promise<unknown>>();

  constructor(
    readonly inbox: Inbox,
    private readonly now: () => number,
  ) {}

  admit(key: string, envelope: Envelope): Admitted {
    const at = this.now();
    const id = newId(at);
    const messageId = envelope.platformMessageId;
    const write = () =>
      this.inbox.admit({
        id,
        key,
        // Scrubbed as its user entry will be: no secret reaches the inbox's file either.
        envelope: redactEnvelope(envelope),
        ...(messageId ? { dedupeKey: `${key}\n${messageId}` } : {}),
        at,
      });
    // A PostgreSQL pool may commit two concurrent inserts out of order: one key's go one at a time.
    const previous = this.tails.get(key);
    const stored = (previous ? previous.catch(() => {}).then(write) : attempt(write)).then(
      (result) => result.admitted,
    );
    this.tails.set(key, stored);
    stored
      .finally(() => {
        if (this.tails.get(key) === stored) this.tails.delete(key);
      })
      .catch(() => {});
    return {
      id,
      envelope: messageId ? envelope : { ...envelope, platformMessageId: admittedMessageId(id) },
      stored,
    };
  }

  /**
   * Records how an admitted turn ended. Not awaited by the turn: when this write is lost, `recover` finds
   * the turn's entries in the session and settles the item from them.
   */
  finish(id: string, outcome: { result: TurnResult } | { error: unknown }): void {
    const [state, stored] = "result" in outcome ? done(outcome.result) : ended(outcome.error);
    this.inbox.transition(id, state, this.now(), stored).catch(() => {});
  }
}

/** `run()`, with a throw as a rejection, as it would be inside `then`. */
function attempt<T>(run: () => Promise<T>): Promise<T> {
  try {
    return run();
  } catch (error) {
    return Promise.reject(error);
  }
}

function done(result: TurnResult): [InboxState, InboxOutcome] {
  return [
    "done",
    {
      sessionId: result.sessionId,
      ...(result.reply ? { replyId: result.reply.id } : {}),
      ...(result.notice ? { notice: result.notice } : {}),
    },
  ];
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
