import type { Envelope } from "../model/envelope.js";
import { SessiondError } from "../model/errors.js";
import { linkedKey } from "./identity.js";
import type { GroupScope, RoutingConfig } from "./types.js";
import { requireField } from "./validate.js";

/** `<agent>:` when more than one agent is configured, else nothing (GoClaw's multi-agent prefix). */
export function agentPrefix(config: RoutingConfig, agent: string): string {
  return config.agents.length > 1 ? `${agent}:` : "";
}

/** `:thread:<threadId>` for a message inside a thread, whatever the chat type. */
export function threadSuffix(envelope: Envelope): string {
  const threadId = envelope.chat.threadId;
  return threadId === undefined ? "" : `:thread:${requireField(threadId, "chat.threadId")}`;
}

/** The peer part of a direct chat's GoClaw key, after `<channel>:`. */
function directPeer(channel: string, envelope: Envelope): string {
  switch (channel) {
    case "discord":
      return `dm:${requireField(envelope.sender.id, "sender.id")}`;
    // Telegram keys by chat; a Teams 1:1 conversation id is already per user.
    case "telegram":
    case "msteams":
      return requireField(envelope.chat.id, "chat.id");
    default:
      return requireField(envelope.sender.id, "sender.id");
  }
}

export function groupScopeFor(channel: string, config: RoutingConfig): GroupScope {
  return (
    config.groupScopeByChannel?.[channel] ??
    config.groupScope ??
    (channel === "discord" ? "per-group-sender" : "per-group")
  );
}

/**
 * The key of a chat-channel message in the `default` scope (GoClaw's table):
 * - direct, per-channel-peer: `discord:dm:<senderId>`, `telegram:<chatId>`, `msteams:<chatId>`,
 *   `<channel>:<senderId>`; per-peer: `direct:<senderId>`; per-channel-account-peer: the same peers with
 *   the account after the channel, `<channel>:<account|default>:<peer>`; main: `<agent>:main`.
 * - group/channel/thread: per-group `<channel>:<chatId>`, per-group-sender `<channel>:<chatId>:<senderId>`.
 * Identity links rewrite the un-prefixed direct key; then the agent prefix and the thread suffix are added.
 */
export function defaultScopeKey(envelope: Envelope, config: RoutingConfig, agent: string): string {
  const channel = requireField(envelope.channel, "channel");
  const thread = threadSuffix(envelope);
  if (envelope.chat.type === "direct") {
    let base: string;
    switch (config.dmScope) {
      case "main":
        return `${agent}:main${thread}`;
      case "per-peer":
        base = `direct:${requireField(envelope.sender.id, "sender.id")}`;
        break;
      case "per-channel-account-peer":
        base = `${channel}:${requireField(envelope.account ?? "default", "account")}:${directPeer(channel, envelope)}`;
        break;
      case "per-channel-peer":
        base = `${channel}:${directPeer(channel, envelope)}`;
        break;
      default: {
        const unknown: string = config.dmScope;
        throw new SessiondError("INVALID_ARGUMENT", `dmScope ${JSON.stringify(unknown)} is unknown`, {
          details: { field: "dmScope" },
        });
      }
    }
    return `${agentPrefix(config, agent)}${linkedKey(base, config.identityLinks)}${thread}`;
  }
  const chatId = requireField(envelope.chat.id, "chat.id");
  const group =
    groupScopeFor(channel, config) === "per-group-sender"
      ? `${channel}:${chatId}:${requireField(envelope.sender.id, "sender.id")}`
      : `${channel}:${chatId}`;
  return `${agentPrefix(config, agent)}${group}${thread}`;
}
