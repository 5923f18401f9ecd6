import type { Envelope } from "../../src/model/envelope.js";

/** A Telegram direct message from user 42 (the key `telegram:42`), with a platform message id if given. */
export function telegramDm(text: string, platformMessageId?: string): Envelope {
  return {
    channel: "telegram",
    chat: { type: "direct", id: "42" },
    sender: { id: "42" },
    text,
    ...(platformMessageId ? { platformMessageId } : {}),
  };
}
