import type { EntryPoint, Envelope } from "../model/envelope.js";
import { SessiondError } from "../model/errors.js";
import type { RoutingConfig } from "./types.js";
import { requireField, requireKeyPart } from "./validate.js";

export interface EntryPointRoute {
  key: string;
  agent: string;
  createdBy: string;
}

function isAdminSessionId(id: string): boolean {
  return id === "admin-session" || (id.startsWith("admin-") && id.length > "admin-".length);
}

function timestamp(value: unknown, field: string): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
    throw new SessiondError("INVALID_ARGUMENT", `${field} must be a non-negative integer of milliseconds`, {
      details: { field },
    });
  }
  return value;
}

/**
 * The key an entry point names for itself (GoClaw's second table). `agent` is the routed agent
 * (envelope.agent ?? default); the `p2p:<peer>:<defaultAgent>` sessions belong to the default agent.
 */
export function entryPointRoute(
  envelope: Envelope,
  entryPoint: Exclude<EntryPoint, { kind: "channel" }>,
  config: RoutingConfig,
  agent: string,
): EntryPointRoute {
  const sender = () => requireField(envelope.sender.id, "sender.id");
  const p2p = (): EntryPointRoute => {
    const peer = sender();
    return { key: `p2p:${peer}:${config.defaultAgent}`, agent: config.defaultAgent, createdBy: peer };
  };
  switch (entryPoint.kind) {
    case "web_chat": {
      const key =
        entryPoint.sessionId === undefined
          ? "admin-session"
          : requireField(entryPoint.sessionId, "entryPoint.sessionId");
      return { key: requireAdminSession(key), agent, createdBy: sender() };
    }
    case "websocket": {
      const sessionId =
        entryPoint.sessionId === undefined
          ? undefined
          : requireField(entryPoint.sessionId, "entryPoint.sessionId");
      if (entryPoint.web) {
        // A browser may only name an admin conversation, as on REST; naming none gets its connection's own.
        const key =
          sessionId !== undefined
            ? requireAdminSession(sessionId)
            : `admin-conn-${requireField(entryPoint.connectionId, "entryPoint.connectionId")}`;
        return { key, agent, createdBy: sender() };
      }
      return sessionId === undefined ? p2p() : { key: sessionId, agent, createdBy: sender() };
    }
    case "webhook": {
      if (entryPoint.subjectRef !== undefined) {
        const subject = requireField(entryPoint.subjectRef, "entryPoint.subjectRef");
        const peer = sender();
        return { key: `p2p:${peer}:${agent}:for:${subject}`, agent, createdBy: peer };
      }
      if (envelope.channel === "web" && entryPoint.gatewayToken === true) {
        return { key: "admin-session", agent, createdBy: sender() };
      }
      return p2p();
    }
    case "openai_compat": {
      const ip = requireField(entryPoint.clientIp, "entryPoint.clientIp");
      const name =
        entryPoint.session === undefined
          ? ""
          : `:${requireKeyPart(entryPoint.session, "entryPoint.session")}`;
      return { key: `openai-compat:${ip}${name}`, agent, createdBy: ip };
    }
    case "app_api": {
      const user = requireField(entryPoint.user, "entryPoint.user");
      const session =
        entryPoint.sessionId === undefined
          ? ""
          : `/${encodeURIComponent(requireField(entryPoint.sessionId, "entryPoint.sessionId"))}`;
      return { key: `app_api:${encodeURIComponent(user)}${session}`, agent, createdBy: user };
    }
    case "chat_webhook": {
      const type = requireField(entryPoint.type, "entryPoint.type");
      const entity =
        entryPoint.entity === undefined
          ? `ts-${timestamp(entryPoint.at ?? envelope.receivedAt ?? Date.now(), "entryPoint.at")}`
          : requireField(entryPoint.entity, "entryPoint.entity");
      return { key: `webhook:${agent}:${type}:${entity}`, agent, createdBy: sender() };
    }
    case "subagent": {
      const parent = requireField(entryPoint.parentAgent, "entryPoint.parentAgent");
      const at = timestamp(entryPoint.at, "entryPoint.at");
      return { key: `agent:${parent}:subagent:job-${at}`, agent: parent, createdBy: sender() };
    }
    default: {
      const unknown: { kind?: unknown } = entryPoint;
      throw new SessiondError(
        "INVALID_ARGUMENT",
        `entryPoint.kind ${JSON.stringify(unknown.kind)} is unknown`,
        {
          details: { field: "entryPoint.kind" },
        },
      );
    }
  }
}

/** A web session must be `admin-session` or `admin-…`: INVALID_KEY otherwise (REST and WebSocket alike). */
function requireAdminSession(key: string): string {
  if (isAdminSessionId(key)) return key;
  throw new SessiondError(
    "INVALID_KEY",
    `Invalid session key ${JSON.stringify(key.slice(0, 64))}: web chat sessions are "admin-session" or "admin-…"`,
    { details: { reason: "not an admin session id" } },
  );
}
