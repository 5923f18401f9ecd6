import { validateKey } from "./validate.js";

export interface KeyInit {
  agent: string;
  channel: string;
  createdBy: string;
}

const UNKNOWN = "unknown";

function decode(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

/**
 * Best-effort reading of a key that arrived without an envelope (a CLI or API call naming a key).
 * Keys cannot be parsed exactly (peer ids may contain `:`), so this guesses; it never throws for a
 * valid key. Known shapes:
 * - `admin-…` → web, created by `admin`; `openai-compat:<ip>`; `app_api:<user>[/<id>]` (user decoded)
 * - `p2p:<peer>:<agent>[:for:<subject>]`; `webhook:<agent>:<type>:…`; `agent:<parent>:subagent:…`
 * - chat keys, with a leading agent id when it is `defaultAgent` or one of `agents`:
 *   `<channel>:…:<peer>` → the channel and the last segment (`msteams:` keeps the whole conversation id);
 *   a `:thread:<id>` suffix is ignored; a key without `:` has channel `unknown`.
 */
export function initForKey(key: string, defaultAgent: string, agents: readonly string[] = []): KeyInit {
  validateKey(key);
  if (key.startsWith("admin-")) return { agent: defaultAgent, channel: "web", createdBy: "admin" };
  const colon = key.indexOf(":");
  if (colon < 0) return { agent: defaultAgent, channel: UNKNOWN, createdBy: UNKNOWN };
  const head = key.slice(0, colon);
  const rest = key.slice(colon + 1);
  switch (head) {
    case "openai-compat":
      return { agent: defaultAgent, channel: head, createdBy: rest || UNKNOWN };
    case "app_api": {
      const slash = rest.indexOf("/");
      const user = decode(slash < 0 ? rest : rest.slice(0, slash));
      return { agent: defaultAgent, channel: head, createdBy: user || UNKNOWN };
    }
    case "p2p": {
      const forAt = rest.indexOf(":for:");
      const pair = forAt < 0 ? rest : rest.slice(0, forAt);
      const last = pair.lastIndexOf(":");
      if (last <= 0) return { agent: defaultAgent, channel: head, createdBy: pair || UNKNOWN };
      return { agent: pair.slice(last + 1) || defaultAgent, channel: head, createdBy: pair.slice(0, last) };
    }
    case "webhook": {
      const agent = rest.split(":")[0] || defaultAgent;
      return { agent, channel: head, createdBy: head };
    }
    case "agent": {
      const match = /^([^:]+):subagent:/.exec(rest);
      if (match?.[1] !== undefined) return { agent: match[1], channel: "subagent", createdBy: match[1] };
    }
  }
  let agent = defaultAgent;
  let chat = key;
  if (head === defaultAgent || agents.includes(head)) {
    agent = head;
    chat = rest;
  }
  const thread = chat.indexOf(":thread:");
  if (thread > 0) chat = chat.slice(0, thread);
  const sep = chat.indexOf(":");
  if (sep < 0) {
    // `<agent>:main` (dmScope main) or CrabTalk's `<agent>:<sender>`.
    return { agent, channel: UNKNOWN, createdBy: chat === "main" || chat === "" ? UNKNOWN : chat };
  }
  const channel = chat.slice(0, sep);
  const peer = chat.slice(sep + 1);
  const createdBy = channel === "msteams" ? peer : peer.slice(peer.lastIndexOf(":") + 1);
  return { agent, channel: channel || UNKNOWN, createdBy: createdBy || UNKNOWN };
}
