/** One inbound message, normalised from whatever channel or API it came through. */
export type ChatType = "direct" | "group" | "channel" | "thread";

export interface Sender {
  id: string;
  name?: string;
}

export interface Chat {
  type: ChatType;
  /** The platform's conversation id: a Telegram chat id, a Discord channel id, a Teams conversation id. */
  id: string;
  /** Set when the message is inside a thread of `id`. */
  threadId?: string;
}

/** A non-text part of a message (an image, a file), referenced rather than embedded. */
export interface Part {
  kind: string;
  url?: string;
  name?: string;
  mimeType?: string;
  text?: string;
}

/**
 * Where the message entered the gateway. Chat channels route through the configured scope; the other
 * entry points name their sessions themselves (behaviours.md §1).
 */
export type EntryPoint =
  | { kind: "channel" }
  /** Web UI chat (`POST /api/chat`): `admin-session` or an `admin-…` id the page made. */
  | { kind: "web_chat"; sessionId?: string }
  /** A WebSocket connection; `web` is true on channel `web`. */
  | { kind: "websocket"; connectionId: string; web: boolean; sessionId?: string }
  /** `/api/webhook`: `gatewayToken` is true when channel `web` came with the gateway token. */
  | { kind: "webhook"; subjectRef?: string; gatewayToken?: boolean }
  /** An OpenAI-compatible request; `session` is the client's own name for it (`user`, `X-Sessiond-Session`). */
  | { kind: "openai_compat"; clientIp: string; session?: string }
  | { kind: "app_api"; user: string; sessionId?: string }
  /** A chat webhook about an object (merge request, alert); `at` names the event time when no entity. */
  | { kind: "chat_webhook"; type: string; entity?: string; at?: number }
  | { kind: "subagent"; parentAgent: string; at: number };

export interface Envelope {
  /** The agent the message is routed to; the configured default agent when absent. */
  agent?: string;
  channel: string;
  /** The bot account on the channel that received it (for per-account scopes). */
  account?: string;
  chat: Chat;
  sender: Sender;
  /** ZeroClaw's reply target: where the answer goes. Defaults to the chat id. */
  replyTarget?: string;
  text: string;
  parts?: Part[];
  /** The platform's id for this message; used as the idempotency key of the stored entry. */
  platformMessageId?: string;
  entryPoint?: EntryPoint;
  receivedAt?: number;
  /**
   * The conversation the client holds before `text` (an OpenAI-compatible request's earlier messages).
   * When it does not continue the stored one, the turn starts a new generation (reset cause `client`).
   */
  clientHistory?: ClientMessage[];
}

/** One message of a client's own copy of the conversation. */
export interface ClientMessage {
  role: "user" | "assistant";
  content: string;
}
