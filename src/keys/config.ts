import { SessiondError } from "../model/errors.js";
import { compileIdentityLinks } from "./identity.js";
import type { GroupScope, RoutingConfig } from "./types.js";
import { DM_SCOPES, GROUP_SCOPES, NAMED_SCOPES } from "./types.js";
import { requireField } from "./validate.js";

export const DEFAULT_AGENT = "main";

function invalid(message: string, field: string): never {
  throw new SessiondError("INVALID_ARGUMENT", message, { details: { field } });
}

function oneOf<T extends string>(value: unknown, allowed: readonly T[], field: string): T {
  if (typeof value !== "string" || !(allowed as readonly string[]).includes(value)) {
    invalid(`${field} must be one of ${allowed.join(", ")}; got ${JSON.stringify(value)}`, field);
  }
  return value as T;
}

/** An agent id is a key component and the multi-agent prefix, so it cannot contain the separator. */
export function requireAgentId(value: unknown, field: string): string {
  const agent = requireField(value, field);
  if (agent.includes(":")) invalid(`${field} must not contain ":"; got ${JSON.stringify(agent)}`, field);
  return agent;
}

/** Fills the defaults and checks the values a YAML file could get wrong; throws INVALID_ARGUMENT. */
export function defaultRoutingConfig(partial: Partial<RoutingConfig> = {}): RoutingConfig {
  const defaultAgent = requireAgentId(partial.defaultAgent ?? DEFAULT_AGENT, "defaultAgent");
  const listed: unknown = partial.agents ?? [defaultAgent];
  if (!Array.isArray(listed)) invalid("agents must be a list of agent ids", "agents");
  const agents = [...new Set(listed.map((a: unknown, i) => requireAgentId(a, `agents[${i}]`)))];
  if (!agents.includes(defaultAgent)) {
    invalid(`defaultAgent ${JSON.stringify(defaultAgent)} is not one of agents`, "defaultAgent");
  }
  const links = partial.identityLinks ?? {};
  compileIdentityLinks(links);
  const config: RoutingConfig = {
    defaultAgent,
    agents,
    scope: oneOf(partial.scope ?? "default", NAMED_SCOPES, "scope"),
    dmScope: oneOf(partial.dmScope ?? "per-channel-peer", DM_SCOPES, "dmScope"),
    identityLinks: Object.fromEntries(
      Object.entries(links).map(([person, accounts]) => [person, [...accounts]]),
    ),
  };
  if (partial.groupScope !== undefined)
    config.groupScope = oneOf(partial.groupScope, GROUP_SCOPES, "groupScope");
  if (partial.groupScopeByChannel !== undefined) {
    const byChannel: Record<string, GroupScope> = {};
    for (const [channel, scope] of Object.entries(partial.groupScopeByChannel)) {
      byChannel[channel] = oneOf(scope, GROUP_SCOPES, `groupScopeByChannel.${channel}`);
    }
    config.groupScopeByChannel = byChannel;
  }
  return config;
}
