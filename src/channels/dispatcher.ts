import { createHash } from "node:crypto";
import { isSessiondError, SessiondError } from "../model/errors.js";
import type { TurnResult } from "../turns/turn.js";
import { DeliveryError } from "./deliver.js";
import { RecentIds } from "./recent-ids.js";
import { openSeenMessages } from "./seen/open.js";
import type { SeenMessages } from "./seen/seen.js";
import type { ChannelEnvelope, ChannelHost, Inbound, Receive, Received } from "./types.js";

/** Turns that may run or wait for delivery at once, over all channels; past it webhooks answer 503. */
export const DEFAULT_MAX_PENDING = 256;

/**
 * What every adapter hands its verified messages to: drops redeliveries, stores unaddressed group
 * messages as context, runs the others' turns in the background and delivers their replies, recording
 * on the session whatever could not be delivered.
 */
export class ChannelDispatcher {
  private readonly recent = new RecentIds();
  private readonly pending = new Set<Promise<void>>();
  /** Opened on the first message: the ids taken, kept for a week beside the store (resets and restarts too). */
  private seen: Promise<SeenMessages> | undefined;

  constructor(
    private readonly host: ChannelHost,
    private readonly maxPending = DEFAULT_MAX_PENDING,
    private readonly openSeen: () => Promise<SeenMessages> = () => openSeenMessages(host.engine),
  ) {}

  /** Closes the seen-messages store (after `drain`). */
  async close(): Promise<void> {
    const seen = await this.seen?.catch(() => undefined);
    await seen?.close();
  }

  /** True when the id was taken before (within the retention), else records it. A failing store lets it through. */
  private async claim(id: string): Promise<boolean> {
    try {
      this.seen ??= this.openSeen().catch((error: unknown) => {
        // Opened again on the next message (a database that was down may be back).
        this.seen = undefined;
        throw error;
      });
      return await (await this.seen).claim(id, Date.now());
    } catch (error) {
      // At least once rather than never: a message is not dropped because its id could not be recorded.
      this.host.logger.warn({ err: String(error) }, "seen messages: cannot record; taken without the check");
      return true;
    }
  }

  private async unclaim(id: string): Promise<void> {
    this.recent.delete(id);
    await (await this.seen?.catch(() => undefined))?.forget(id).catch(() => {});
  }

  /** The receive function of one channel; `answerAll` runs a turn for every group message too. */
  receiver(answerAll: boolean): Receive {
    return (inbound) => this.receive(inbound, answerAll);
  }

  /** Resolves when every turn started so far has been answered (or its failure recorded). */
  async drain(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  private async receive(inbound: Inbound, answerAll: boolean): Promise<Received> {
    const id = dedupeId(inbound.envelope);
    if (!this.recent.add(id)) return "duplicate";
    if (!(await this.claim(id))) return "duplicate";
    const envelope: ChannelEnvelope = { ...inbound.envelope, platformMessageId: id };
    let started: { result: Promise<TurnResult> };
    try {
      if (!inbound.addressed && !answerAll) {
        const appended = await this.host.engine.record(envelope);
        return appended.created[0] ? "context" : "duplicate";
      }
      if (this.pending.size >= this.maxPending) {
        throw new SessiondError(
          "CHANNEL_BUSY",
          `${this.maxPending} channel turns are already running or waiting; try again later`,
        );
      }
      // The platform hears the message was taken only once it is durable: a crash then cannot lose it.
      started = await this.host.startTurn(envelope);
    } catch (error) {
      await this.unclaim(id);
      throw error;
    }
    const task = this.answer(inbound, envelope, started.result).finally(() => this.pending.delete(task));
    this.pending.add(task);
    return "turn";
  }

  /** A message whose session's queue was full: stored (outside the full lane) with a note saying so. */
  private async keepUnanswered(envelope: ChannelEnvelope): Promise<void> {
    const { engine, logger } = this.host;
    try {
      const route = engine.route(envelope);
      await engine.append(
        route.key,
        [
          {
            type: "message",
            role: "user",
            content: envelope.text,
            sender: envelope.sender,
            idempotencyKey: envelope.platformMessageId,
          },
          {
            type: "note",
            level: "warn",
            code: "SESSION_BUSY",
            text: "the session had too many turns waiting: this message was stored without an answer",
          },
        ],
        {
          init: {
            agent: route.agent,
            channel: route.channel,
            chatType: route.chatType,
            createdBy: route.createdBy,
          },
        },
      );
    } catch (error) {
      logger.error({ channel: envelope.channel, err: String(error) }, "message not stored");
    }
  }

  private async answer(
    inbound: Inbound,
    envelope: ChannelEnvelope,
    turn: Promise<TurnResult>,
  ): Promise<void> {
    const { engine, logger } = this.host;
    const channel = envelope.channel;
    let result: TurnResult;
    try {
      result = await turn;
    } catch (error) {
      // A failed turn is already recorded on its session; a busy one never stored the message: keep it.
      const code = isSessiondError(error) ? error.code : "TURN_FAILED";
      logger.warn({ channel, code }, "channel turn failed");
      if (code === "SESSION_BUSY") await this.keepUnanswered(envelope);
      return;
    }
    const text = result.deduplicated ? undefined : (result.reply?.content ?? result.notice);
    if (!text) return;
    try {
      await inbound.reply(text);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const status = error instanceof DeliveryError ? error.status : undefined;
      logger.error({ channel, key: result.key, status }, "reply not delivered");
      await engine
        .append(result.key, [
          { type: "note", level: "error", code: "DELIVERY_FAILED", text: `reply not delivered: ${message}` },
        ])
        .catch((e: unknown) => logger.error({ channel, err: String(e) }, "delivery failure not recorded"));
    }
  }
}

/**
 * The stored idempotency key of a platform message: (channel, bot account, chat, message id), since
 * a Telegram `message_id` is unique only within its chat. Long ones are hashed to fit a key.
 */
export function dedupeId(envelope: ChannelEnvelope): string {
  const id = `${envelope.channel}:${envelope.account}:${envelope.chat.id}:${envelope.platformMessageId}`;
  return id.length <= 256
    ? id
    : `${envelope.channel}:sha256:${createHash("sha256").update(id).digest("hex")}`;
}
