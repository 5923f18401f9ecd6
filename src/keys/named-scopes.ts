import type { Envelope } from "../model/envelope.js";
import { SessiondError } from "../model/errors.js";
import { agentPrefix } from "./scopes.js";
import type { NamedScope, RoutingConfig } from "./types.js";
import { requireField } from "./validate.js";

/**
 * Keys of the other systems' scopes (behaviours.md §1). The ZeroClaw ones take the multi-agent prefix
 * like the default scope, so two agents never share a session; CrabTalk and LoCrew always name the agent.
 * - zeroclaw-sender:       `<channel>:<senderId>` (one session per sender across all their chats)
 * - zeroclaw-reply-target: `<channel>:<replyTarget ?? chatId>`
 * - zeroclaw-thread:       `<channel>:<replyTarget ?? chatId>:<threadId | "-">:<senderId>`
 * - crabtalk:              `<agent>:<senderId>`
 * - locrew:                `<agent>:<channel>:<chatId>` (a DM and two channels are three sessions)
 * Identity links and the `:thread:` suffix belong to the default scope and are not applied here.
 */
export function namedScopeKey(
  scope: Exclude<NamedScope, "default">,
  envelope: Envelope,
  config: RoutingConfig,
  agent: string,
): string {
  const channel = requireField(envelope.channel, "channel");
  const sender = () => requireField(envelope.sender.id, "sender.id");
  const chatId = () => requireField(envelope.chat.id, "chat.id");
  const target = () =>
    envelope.replyTarget === undefined ? chatId() : requireField(envelope.replyTarget, "replyTarget");
  switch (scope) {
    case "zeroclaw-sender":
      return `${agentPrefix(config, agent)}${channel}:${sender()}`;
    case "zeroclaw-reply-target":
      return `${agentPrefix(config, agent)}${channel}:${target()}`;
    case "zeroclaw-thread": {
      const threadId = envelope.chat.threadId;
      const thread = threadId === undefined ? "-" : requireField(threadId, "chat.threadId");
      return `${agentPrefix(config, agent)}${channel}:${target()}:${thread}:${sender()}`;
    }
    case "crabtalk":
      return `${agent}:${sender()}`;
    case "locrew":
      return `${agent}:${channel}:${chatId()}`;
    default: {
      const unknown: string = scope;
      throw new SessiondError("INVALID_ARGUMENT", `scope ${JSON.stringify(unknown)} is unknown`, {
        details: { field: "scope" },
      });
    }
  }
}
