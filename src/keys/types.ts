import type { ChatType } from "../model/envelope.js";

export const DM_SCOPES = ["per-channel-peer", "per-peer", "main", "per-channel-account-peer"] as const;
export const GROUP_SCOPES = ["per-group", "per-group-sender"] as const;
export const NAMED_SCOPES = [
  "default",
  "zeroclaw-sender",
  "zeroclaw-reply-target",
  "zeroclaw-thread",
  "crabtalk",
  "locrew",
] as const;

export type DmScope = (typeof DM_SCOPES)[number];
export type GroupScope = (typeof GROUP_SCOPES)[number];
export type NamedScope = (typeof NAMED_SCOPES)[number];

/** `session.identity_links`: a person → their accounts, each written as its key (`telegram:123`). */
export type IdentityLinks = Readonly<Record<string, readonly string[]>>;

export interface RoutingConfig {
  defaultAgent: string;
  /** All configured agent ids; with more than one, chat-channel keys get the routed agent's id in front. */
  agents: string[];
  scope: NamedScope;
  /** Private by default; a shared `main` leaked DMs between users (openclaw #54387). */
  dmScope: DmScope;
  /** When absent: Discord guilds per-group-sender (as GoClaw), every other channel per-group. */
  groupScope?: GroupScope;
  groupScopeByChannel?: Record<string, GroupScope>;
  identityLinks: Record<string, string[]>;
}

export interface Route {
  key: string;
  agent: string;
  channel: string;
  chatType: ChatType;
  createdBy: string;
}
