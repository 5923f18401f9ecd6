import { routeEnvelope } from "../keys/route.js";
import { groupScopeFor } from "../keys/scopes.js";
import type { RoutingConfig } from "../keys/types.js";
import { validateKey } from "../keys/validate.js";
import { isSessiondError } from "../model/errors.js";
import type { SessionInit } from "../model/session.js";
import { foreignAccount } from "./account-map.js";
import type { ChatOrigin, SourceSession } from "./types.js";

export interface RoutedSession {
  key: string;
  init: SessionInit;
  /** What the key rests on that the peer's data does not say, one sentence each (for the report). */
  assumed: string[];
}

/**
 * The key and session facts of a source session: what sessiond's router gives the next message from the
 * same chat, so the conversation carries on after the move. An agent the config does not list is routed
 * as if it were listed beside the others (its id in front of the key), so two agents' chats never share
 * a key. Where the peer's data lacks what the router needs (a sender for a per-sender group, a chat to
 * route at all), the key is the closest one and `assumed` says why new messages may not reach it.
 */
export function routeSession(session: SourceSession, routing: RoutingConfig): RoutedSession {
  const assumed = [...(session.assumed ?? [])];
  const origin = session.origin;
  if (!origin) {
    const key = validateKey(session.key);
    if (!session.ownKey)
      assumed.push(
        `the peer's data names no chat sessiond routes; kept as ${key}, which no new message reaches`,
      );
    return { key, init: session.init, assumed };
  }
  if (origin.sharedMain && routing.dmScope !== "main") {
    const key = validateKey(session.key);
    assumed.push(
      `the peer kept one session for all of agent ${origin.agent}'s direct chats (dmScope main); kept as ${key}, where new messages go with dm_scope: main`,
    );
    return { key, init: session.init, assumed };
  }
  const agents = routing.agents.includes(origin.agent) ? routing.agents : [...routing.agents, origin.agent];
  let config: RoutingConfig = { ...routing, agents };
  if (origin.senderId === undefined && needsSender(origin, routing)) {
    if (origin.chatType !== "direct" && routing.scope === "default") {
      // The peer kept one session for the whole room: its per-room key is the closest sessiond has.
      config = {
        ...config,
        groupScopeByChannel: { ...routing.groupScopeByChannel, [origin.channel]: "per-group" },
      };
      assumed.push(
        `the peer kept one session for the whole ${origin.channel} ${origin.chatType} ${origin.chatId}; sessiond's routing gives each sender their own, so new messages there go to a key per sender; set group_scope_by_channel.${origin.channel}: per-group to continue this one`,
      );
    } else
      assumed.push(
        `the peer's data does not say who wrote in ${origin.channel} ${origin.chatType} ${origin.chatId}; routed as if the sender were ${origin.chatId}`,
      );
  }
  if (
    origin.account !== undefined &&
    origin.chatType === "direct" &&
    routing.dmScope !== "per-channel-account-peer"
  )
    assumed.push(
      `account ${origin.account} is not in sessiond's key under dm_scope ${routing.dmScope}; set dm_scope: per-channel-account-peer to keep each account's chats apart`,
    );
  const foreign = routing.dmScope === "per-channel-account-peer" ? foreignAccount(origin) : undefined;
  if (foreign) assumed.push(foreign);
  try {
    const route = routeEnvelope(envelopeOf(origin), config);
    return {
      key: route.key,
      init: {
        agent: route.agent,
        channel: route.channel,
        chatType: route.chatType,
        createdBy: route.createdBy,
      },
      assumed,
    };
  } catch (error) {
    if (!isSessiondError(error)) throw error;
    const key = validateKey(session.key);
    assumed.push(`sessiond's router cannot place it (${error.message}); kept as ${key}`);
    return { key, init: session.init, assumed };
  }
}

/** Whether the router puts the sender in this chat's key (so an unknown sender changes it). */
function needsSender(origin: ChatOrigin, routing: RoutingConfig): boolean {
  switch (routing.scope) {
    case "zeroclaw-reply-target":
    case "locrew":
      return false;
    case "default":
      if (origin.chatType !== "direct") return groupScopeFor(origin.channel, routing) === "per-group-sender";
      if (routing.dmScope === "main") return false;
      return routing.dmScope === "per-peer" || !["telegram", "msteams"].includes(origin.channel);
    default:
      return true;
  }
}

function envelopeOf(origin: ChatOrigin) {
  return {
    agent: origin.agent,
    channel: origin.channel,
    ...(origin.account !== undefined ? { account: origin.account } : {}),
    chat: {
      type: origin.chatType,
      id: origin.chatId,
      ...(origin.threadId !== undefined ? { threadId: origin.threadId } : {}),
    },
    sender: { id: origin.senderId ?? origin.chatId },
    text: "",
  };
}
