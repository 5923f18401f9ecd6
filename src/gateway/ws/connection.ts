import type { Envelope } from "../../model/envelope.js";
import type { Session } from "../../model/session.js";
import type { GatewayDeps } from "../deps.js";
import type { RunningTurns } from "./kill.js";
import type { RequestFrame, ServerFrame } from "./protocol.js";

/** What a client said about itself in the connection URL's query. */
export interface ConnectionParams {
  /** Made by the gateway; `admin-conn-<id>` is this connection's own session on channel `web`. */
  id: string;
  channel: string;
  web: boolean;
  /** The sender of this connection's messages; the connection id when the client names none. */
  peer: string;
  /** The session the client names for its chat. */
  session?: string;
}

export interface Connection {
  readonly params: ConnectionParams;
  send(frame: ServerFrame): void;
  event(event: string, data: unknown): void;
  /** Live session-event subscriptions: key → unsubscribe. */
  readonly subscriptions: Map<string, () => void>;
}

export interface HandlerContext {
  deps: GatewayDeps;
  turns: RunningTurns;
  connection: Connection;
  request: RequestFrame;
}

export type Handler = (params: Record<string, unknown>, context: HandlerContext) => Promise<unknown>;

export function connectionParams(id: string, query: URLSearchParams): ConnectionParams {
  const channel = query.get("channel") || "websocket";
  const session = query.get("session") || undefined;
  return {
    id,
    channel,
    web: channel === "web",
    peer: query.get("peer") || id,
    ...(session !== undefined ? { session } : {}),
  };
}

/** The envelope of a message on this connection; `session` (a chat.send param) wins over the connection's. */
export function envelopeFor(
  params: ConnectionParams,
  text: string,
  options: { session?: string | undefined; agent?: string | undefined } = {},
): Envelope {
  const session = options.session ?? params.session;
  return {
    channel: params.channel,
    chat: { type: "direct", id: params.peer },
    sender: { id: params.peer },
    text,
    ...(options.agent !== undefined ? { agent: options.agent } : {}),
    entryPoint: {
      kind: "websocket",
      connectionId: params.id,
      web: params.web,
      ...(session !== undefined ? { sessionId: session } : {}),
    },
  };
}

/** The key a method's `session` param names: a key as `sessions.list` gives it, else the connection's own. */
export function targetKey(context: HandlerContext, session: string | undefined): string {
  if (session !== undefined) return session;
  return context.deps.engine.route(envelopeFor(context.connection.params, "")).key;
}

/** One entry of CrabTalk's `SessionList`; `id` is the session key the other methods take. */
export interface SessionInfo {
  id: string;
  agent: string;
  created_by: string;
  message_count: number;
  alive_secs: number;
  /** A turn is running or waiting on the key. */
  active: boolean;
  title: string;
}

export function sessionInfo(session: Session, queued: Map<string, number>, now: number): SessionInfo {
  return {
    id: session.key,
    agent: session.agent,
    created_by: session.createdBy,
    message_count: session.messageCount,
    alive_secs: Math.max(0, Math.floor((now - session.createdAt) / 1000)),
    active: (queued.get(session.key) ?? 0) > 0,
    title: session.title,
  };
}
