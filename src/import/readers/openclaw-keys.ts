import { isObject } from "../messages.js";
import type { ChatOrigin } from "../types.js";

/** What an OpenClaw session key (peer-formats §1.3) says about its chat. */
export interface OpenclawChat {
  agent: string;
  /** The key when the chat cannot be routed: sessiond's shape for it, from the key alone. */
  fallbackKey: string;
  channel: string;
  peer: string;
  origin?: ChatOrigin;
}

const INTERNAL = new Set(["cron", "subagent", "acp"]);

/**
 * `agent:<a>:<channel>:direct:<peer>`, `…:<channel>:<account>:direct:<peer>`, `…:direct:<peer>`,
 * `…:<channel>:group|channel:<id>`, `…:main`, each with an optional `:thread:<id>`. OpenClaw's agent
 * `main` is sessiond's default agent. Where the key has no channel (`direct:<peer>`, `main`), the
 * session entry's `channel`, `lastChannel`, `deliveryContext.channel` or `origin` names it.
 */
export function openclawChat(
  rawKey: string,
  entry: Record<string, unknown>,
  defaultAgent: string,
): OpenclawChat {
  const match = /^agent:([^:]+):(.+)$/.exec(rawKey);
  const agentId = match?.[1] ?? "main";
  const agent = agentId === "main" ? defaultAgent : agentId;
  const prefix = agent === defaultAgent ? "" : `${agent}:`;
  const rest = match?.[2] ?? rawKey;
  const at = rest.lastIndexOf(":thread:");
  const base = at === -1 ? rest : rest.slice(0, at);
  const threadId = at === -1 ? undefined : rest.slice(at + ":thread:".length);
  const thread = threadId === undefined ? "" : `:thread:${threadId}`;
  const parts = base.split(":");
  const head = parts[0] ?? "";
  if (parts.length === 1 && head === "main") {
    // dmScope main: every DM of the agent shares it; the channel, where the entry names one, routes it.
    const channel = channelOf(entry);
    const fallbackKey = `${agent}:main${thread}`;
    if (!channel) return { agent, fallbackKey, channel: "openclaw", peer: "main" };
    return {
      agent,
      fallbackKey,
      channel,
      peer: "main",
      origin: {
        agent,
        channel,
        chatType: "direct",
        chatId: "main",
        sharedMain: true,
        ...(threadId !== undefined ? { threadId } : {}),
      },
    };
  }
  if (INTERNAL.has(head)) return { agent, fallbackKey: rawKey, channel: "openclaw", peer: rest };
  const kindAt = parts.findIndex((p, i) => i <= 2 && (p === "direct" || p === "group" || p === "channel"));
  if (kindAt === -1) return { agent, fallbackKey: `${prefix}${rest}`, channel: "openclaw", peer: rest };
  const kind = parts[kindAt] as "direct" | "group" | "channel";
  const peer = parts.slice(kindAt + 1).join(":");
  const channel = kindAt >= 1 ? head : channelOf(entry);
  const account = kindAt === 2 ? parts[1] : undefined;
  const fallbackKey = channel ? `${prefix}${channel}:${peer}${thread}` : `${prefix}direct:${peer}${thread}`;
  if (!channel || peer === "") return { agent, fallbackKey, channel: channel ?? "openclaw", peer };
  // A group or channel session is the whole room's: OpenClaw records no single sender for it.
  return {
    agent,
    fallbackKey,
    channel,
    peer,
    origin: {
      agent,
      channel,
      chatType: kind,
      chatId: peer,
      ...(kind === "direct" ? { senderId: peer } : {}),
      ...(threadId !== undefined ? { threadId } : {}),
      ...(account !== undefined && account !== "default" ? { account } : {}),
    },
  };
}

function channelOf(entry: Record<string, unknown>): string | undefined {
  const candidates = [
    entry.channel,
    entry.lastChannel,
    isObject(entry.deliveryContext) ? entry.deliveryContext.channel : undefined,
    isObject(entry.origin) ? (entry.origin.channel ?? entry.origin.provider) : undefined,
  ];
  const found = candidates.find((c): c is string => typeof c === "string" && c !== "");
  return found?.toLowerCase();
}
