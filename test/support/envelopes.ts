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

/** A web chat on an explicit key (`admin-…`): how the gateway's chat, and so a fork's chat, reaches a key. */
export function webChatOn(key: string, text: string): Envelope {
  return {
    channel: "web",
    chat: { type: "direct", id: key },
    sender: { id: "admin" },
    text,
    entryPoint: { kind: "web_chat", sessionId: key },
  };
}

/** A message in the Telegram group `group` (the key `telegram:<group>`) from `sender`, with its message id. */
export function telegramGroup(
  group: string,
  sender: string,
  text: string,
  platformMessageId: string,
): Envelope {
  return {
    channel: "telegram",
    chat: { type: "group", id: group },
    sender: { id: sender },
    text,
    platformMessageId,
  };
}
