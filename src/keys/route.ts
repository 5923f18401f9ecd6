import type { ChatType, Envelope } from "../model/envelope.js";
import { SessiondError } from "../model/errors.js";
import { requireAgentId } from "./config.js";
import { entryPointRoute } from "./entry-points.js";
import { namedScopeKey } from "./named-scopes.js";
import { defaultScopeKey } from "./scopes.js";
import type { Route, RoutingConfig } from "./types.js";
import { requireField, validateKey } from "./validate.js";

const CHAT_TYPES: readonly string[] = ["direct", "group", "channel", "thread"] satisfies ChatType[];

function invalid(message: string, field: string): never {
  throw new SessiondError("INVALID_ARGUMENT", message, { details: { field } });
}

function routedAgent(envelope: Envelope, config: RoutingConfig): string {
  if (envelope.agent === undefined) return requireAgentId(config.defaultAgent, "defaultAgent");
  const agent = requireAgentId(envelope.agent, "agent");
  if (config.agents.length > 0 && !config.agents.includes(agent)) {
    invalid(`agent ${JSON.stringify(agent)} is not a configured agent`, "agent");
  }
  return agent;
}

/**
 * The session key of an envelope, and what a new session on it is created with. Throws INVALID_ARGUMENT
 * for an envelope that lacks a key component, INVALID_KEY when the result is not a valid key.
 */
export function routeEnvelope(envelope: Envelope, config: RoutingConfig): Route {
  if (typeof envelope !== "object" || envelope === null) invalid("envelope must be an object", "envelope");
  if (typeof envelope.chat !== "object" || envelope.chat === null) invalid("chat must be an object", "chat");
  if (typeof envelope.sender !== "object" || envelope.sender === null) {
    invalid("sender must be an object", "sender");
  }
  const channel = requireField(envelope.channel, "channel");
  const agent = routedAgent(envelope, config);
  const entryPoint = envelope.entryPoint;
  if (entryPoint !== undefined && entryPoint.kind !== "channel") {
    const route = entryPointRoute(envelope, entryPoint, config, agent);
    return { ...route, key: validateKey(route.key), channel, chatType: "direct" };
  }
  const chatType = envelope.chat.type;
  if (!CHAT_TYPES.includes(chatType))
    invalid(`chat.type ${JSON.stringify(chatType)} is unknown`, "chat.type");
  const key =
    config.scope === "default"
      ? defaultScopeKey(envelope, config, agent)
      : namedScopeKey(config.scope, envelope, config, agent);
  return {
    key: validateKey(key),
    agent,
    channel,
    chatType,
    createdBy: requireField(envelope.sender.id, "sender.id"),
  };
}
