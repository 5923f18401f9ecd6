import { routeEnvelope } from "../keys/route.js";
import type { RoutingConfig } from "../keys/types.js";
import { validateKey } from "../keys/validate.js";
import type { SessionInit } from "../model/session.js";
import type { SourceSession } from "./types.js";

/**
 * The key and session facts of a source session: what sessiond's router gives the next message from the
 * same chat, so the conversation carries on after the move. An agent the config does not list is routed
 * as if it were listed beside the others (its id in front of the key), so two agents' chats never share
 * a key. A session without an origin, or one the router cannot place, keeps the key its reader made.
 */
export function routeSession(
  session: SourceSession,
  routing: RoutingConfig,
): { key: string; init: SessionInit } {
  const origin = session.origin;
  if (!origin) return { key: validateKey(session.key), init: session.init };
  const agents = routing.agents.includes(origin.agent) ? routing.agents : [...routing.agents, origin.agent];
  try {
    const route = routeEnvelope(
      {
        agent: origin.agent,
        channel: origin.channel,
        ...(origin.account !== undefined ? { account: origin.account } : {}),
        chat: {
          type: origin.chatType,
          id: origin.chatId,
          ...(origin.threadId !== undefined ? { threadId: origin.threadId } : {}),
        },
        sender: { id: origin.senderId },
        text: "",
      },
      { ...routing, agents },
    );
    return {
      key: route.key,
      init: {
        agent: route.agent,
        channel: route.channel,
        chatType: route.chatType,
        createdBy: route.createdBy,
      },
    };
  } catch {
    return { key: validateKey(session.key), init: session.init };
  }
}
