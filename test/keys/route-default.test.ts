import { describe, expect, it } from "vitest";
import type { RoutingConfig } from "../../src/keys/index.js";
import { defaultRoutingConfig, routeEnvelope } from "../../src/keys/index.js";
import type { Chat, Envelope } from "../../src/model/envelope.js";
import { isSessiondError } from "../../src/model/errors.js";

function env(channel: string, chat: Chat, senderId: string, extra: Partial<Envelope> = {}): Envelope {
  return { channel, chat, sender: { id: senderId }, text: "hi", ...extra };
}

function key(envelope: Envelope, partial: Partial<RoutingConfig> = {}): string {
  return routeEnvelope(envelope, defaultRoutingConfig(partial)).key;
}

function errorOf(fn: () => unknown): { code: string; field: unknown } | undefined {
  try {
    fn();
  } catch (error) {
    if (isSessiondError(error)) return { code: error.code, field: error.details?.field };
    throw error;
  }
  return undefined;
}

const DISCORD_USER = "987654321098765432";
const DISCORD_CHANNEL = "123456789012345678";
const TEAMS_CONV = "19:0123456789abcdef0123456789abcdef@thread.v2";

describe("routeEnvelope, default scope: the GoClaw key table", () => {
  it("Discord DM → discord:dm:<userId>", () => {
    const route = routeEnvelope(
      env("discord", { type: "direct", id: "555" }, DISCORD_USER),
      defaultRoutingConfig(),
    );
    expect(route).toEqual({
      key: `discord:dm:${DISCORD_USER}`,
      agent: "main",
      channel: "discord",
      chatType: "direct",
      createdBy: DISCORD_USER,
    });
  });

  it("Discord guild → discord:<channelId>:<userId>, one session per user in each channel", () => {
    const a = key(env("discord", { type: "group", id: DISCORD_CHANNEL }, DISCORD_USER));
    const b = key(env("discord", { type: "group", id: DISCORD_CHANNEL }, "111"));
    const c = key(env("discord", { type: "channel", id: "222" }, DISCORD_USER));
    expect(a).toBe(`discord:${DISCORD_CHANNEL}:${DISCORD_USER}`);
    expect(b).toBe(`discord:${DISCORD_CHANNEL}:111`);
    expect(c).toBe(`discord:222:${DISCORD_USER}`);
  });

  it("MS Teams group chat and channel → msteams:<conversationId>, shared by everyone", () => {
    const alice = key(env("msteams", { type: "group", id: TEAMS_CONV }, "alice"));
    const bob = key(env("msteams", { type: "channel", id: TEAMS_CONV }, "bob"));
    expect(alice).toBe(`msteams:${TEAMS_CONV}`);
    expect(bob).toBe(alice);
  });

  it("MS Teams 1:1 → msteams:<conversationId>, which is per user", () => {
    expect(key(env("msteams", { type: "direct", id: "a:1on1-alice" }, "alice"))).toBe("msteams:a:1on1-alice");
    expect(key(env("msteams", { type: "direct", id: "a:1on1-bob" }, "bob"))).toBe("msteams:a:1on1-bob");
  });

  it("Telegram → telegram:<chatId>, per chat (DM and group)", () => {
    expect(key(env("telegram", { type: "direct", id: "123456789" }, "123456789"))).toBe("telegram:123456789");
    const g1 = key(env("telegram", { type: "group", id: "-100200" }, "1"));
    const g2 = key(env("telegram", { type: "group", id: "-100200" }, "2"));
    expect(g1).toBe("telegram:-100200");
    expect(g2).toBe(g1);
  });

  it("any other channel: DM → <channel>:<senderId>, group → <channel>:<chatId>", () => {
    expect(key(env("slack", { type: "direct", id: "D1" }, "U1"))).toBe("slack:U1");
    expect(key(env("facebook", { type: "direct", id: "x" }, "psid-9"))).toBe("facebook:psid-9");
    expect(key(env("slack", { type: "group", id: "C1" }, "U1"))).toBe("slack:C1");
  });

  it("more than one agent → <agentId>:<channel>:<peer…> for the routed agent", () => {
    const config = { agents: ["main", "agent-ops"] };
    expect(key(env("msteams", { type: "group", id: TEAMS_CONV }, "x", { agent: "agent-ops" }), config)).toBe(
      `agent-ops:msteams:${TEAMS_CONV}`,
    );
    expect(key(env("telegram", { type: "direct", id: "123" }, "123"), config)).toBe("main:telegram:123");
    expect(key(env("discord", { type: "direct", id: "1" }, DISCORD_USER), config)).toBe(
      `main:discord:dm:${DISCORD_USER}`,
    );
    const route = routeEnvelope(
      env("telegram", { type: "direct", id: "5" }, "5", { agent: "agent-ops" }),
      defaultRoutingConfig(config),
    );
    expect(route.agent).toBe("agent-ops");
  });

  it("one agent → no prefix even when the envelope names it", () => {
    expect(key(env("telegram", { type: "direct", id: "5" }, "5", { agent: "main" }))).toBe("telegram:5");
  });

  it("rejects an envelope routed to an agent that is not configured", () => {
    const e = errorOf(() => key(env("telegram", { type: "direct", id: "5" }, "5", { agent: "ghost" })));
    expect(e).toEqual({ code: "INVALID_ARGUMENT", field: "agent" });
  });
});

describe("routeEnvelope, dmScope", () => {
  const telegramDm = env("telegram", { type: "direct", id: "42" }, "42");
  const slackDm = env("slack", { type: "direct", id: "D9" }, "42");

  it("defaults to per-channel-peer, never main", () => {
    expect(defaultRoutingConfig().dmScope).toBe("per-channel-peer");
    expect(key(telegramDm)).toBe("telegram:42");
    expect(key(env("slack", { type: "direct", id: "D1" }, "u2"))).not.toBe(key(slackDm));
  });

  it("per-peer → direct:<senderId>, shared across channels", () => {
    expect(key(telegramDm, { dmScope: "per-peer" })).toBe("direct:42");
    expect(key(slackDm, { dmScope: "per-peer" })).toBe("direct:42");
    expect(key(telegramDm, { dmScope: "per-peer", agents: ["main", "b"] })).toBe("main:direct:42");
  });

  it("main → <agent>:main for every DM, always agent-prefixed, one per agent", () => {
    expect(key(telegramDm, { dmScope: "main" })).toBe("main:main");
    expect(key(slackDm, { dmScope: "main" })).toBe("main:main");
    const multi = { dmScope: "main" as const, agents: ["main", "ops"] };
    expect(key(telegramDm, multi)).toBe("main:main");
    expect(key({ ...telegramDm, agent: "ops" }, multi)).toBe("ops:main");
  });

  it("per-channel-account-peer → <channel>:<account>:<peer>, account default when absent", () => {
    const scope = { dmScope: "per-channel-account-peer" as const };
    expect(key(telegramDm, scope)).toBe("telegram:default:42");
    expect(key({ ...telegramDm, account: "bot2" }, scope)).toBe("telegram:bot2:42");
    expect(key(env("discord", { type: "direct", id: "1" }, "7", { account: "b" }), scope)).toBe(
      "discord:b:dm:7",
    );
    expect(errorOf(() => key({ ...slackDm, account: "" }, scope))).toEqual({
      code: "INVALID_ARGUMENT",
      field: "account",
    });
  });

  it("dmScope does not change group keys", () => {
    const group = env("slack", { type: "group", id: "C1" }, "U1");
    for (const dmScope of ["per-peer", "main", "per-channel-account-peer"] as const) {
      expect(key(group, { dmScope })).toBe("slack:C1");
    }
  });
});

describe("routeEnvelope, group scopes", () => {
  const slackGroup = (sender: string) => env("slack", { type: "group", id: "C1" }, sender);
  const discordGroup = (sender: string) => env("discord", { type: "group", id: "G1" }, sender);

  it("defaults: Discord per-group-sender, every other channel per-group", () => {
    expect(key(discordGroup("u1"))).not.toBe(key(discordGroup("u2")));
    expect(key(slackGroup("u1"))).toBe(key(slackGroup("u2")));
  });

  it("groupScope applies to every channel", () => {
    expect(key(slackGroup("u1"), { groupScope: "per-group-sender" })).toBe("slack:C1:u1");
    expect(key(discordGroup("u1"), { groupScope: "per-group" })).toBe("discord:G1");
    expect(key(discordGroup("u2"), { groupScope: "per-group" })).toBe("discord:G1");
  });

  it("groupScopeByChannel wins over groupScope and the channel default", () => {
    const config = {
      groupScope: "per-group-sender" as const,
      groupScopeByChannel: { telegram: "per-group" as const, discord: "per-group" as const },
    };
    expect(key(env("telegram", { type: "group", id: "-1" }, "u1"), config)).toBe("telegram:-1");
    expect(key(discordGroup("u1"), config)).toBe("discord:G1");
    expect(key(slackGroup("u1"), config)).toBe("slack:C1:u1");
  });

  it("never applies identity links to groups", () => {
    const identityLinks = { alice: ["slack:U1", "slack:C1"] };
    expect(key(slackGroup("U9"), { identityLinks })).toBe("slack:C1");
  });
});

describe("routeEnvelope, threads", () => {
  it("adds :thread:<threadId> to group, channel and thread chats", () => {
    expect(key(env("slack", { type: "group", id: "C1", threadId: "171.5" }, "U1"))).toBe(
      "slack:C1:thread:171.5",
    );
    expect(key(env("discord", { type: "channel", id: "G1", threadId: "T1" }, "u"))).toBe(
      "discord:G1:u:thread:T1",
    );
    expect(key(env("slack", { type: "thread", id: "C1", threadId: "9" }, "U1"))).toBe("slack:C1:thread:9");
  });

  it("adds it to direct chats too, after the link and the agent prefix", () => {
    const config = { agents: ["main", "ops"], identityLinks: { a: ["telegram:1", "slack:U2"] } };
    expect(key(env("slack", { type: "direct", id: "D1", threadId: "t" }, "U2"), config)).toBe(
      "main:telegram:1:thread:t",
    );
    expect(key(env("slack", { type: "direct", id: "D1", threadId: "t" }, "U2"), { dmScope: "main" })).toBe(
      "main:main:thread:t",
    );
  });

  it("a thread chat without threadId keys like a group", () => {
    expect(key(env("slack", { type: "thread", id: "C1" }, "U1"))).toBe("slack:C1");
  });

  it("separates two threads of one chat", () => {
    const a = key(env("slack", { type: "group", id: "C1", threadId: "1" }, "U1"));
    const b = key(env("slack", { type: "group", id: "C1", threadId: "2" }, "U1"));
    expect(a).not.toBe(b);
  });
});

describe("routeEnvelope, bad envelopes", () => {
  it.each([
    ["sender.id", env("slack", { type: "direct", id: "D1" }, "")],
    ["channel", env("", { type: "direct", id: "D1" }, "U1")],
    ["chat.id", env("slack", { type: "group", id: "" }, "U1")],
    ["chat.threadId", env("slack", { type: "group", id: "C1", threadId: "" }, "U1")],
    ["chat.id", env("telegram", { type: "direct", id: "" }, "1")],
  ])("an empty %s is INVALID_ARGUMENT naming the field", (field, envelope) => {
    expect(errorOf(() => key(envelope))).toEqual({ code: "INVALID_ARGUMENT", field });
  });

  it("an unknown chat type is INVALID_ARGUMENT", () => {
    const envelope = env("slack", { type: "room" as unknown as "group", id: "C1" }, "U1");
    expect(errorOf(() => key(envelope))).toEqual({ code: "INVALID_ARGUMENT", field: "chat.type" });
  });

  it("a component with a control character makes the key INVALID_KEY", () => {
    expect(errorOf(() => key(env("slack", { type: "direct", id: "D1" }, "U\n1")))?.code).toBe("INVALID_KEY");
  });

  it("a key over 512 bytes is INVALID_KEY", () => {
    expect(errorOf(() => key(env("slack", { type: "direct", id: "D1" }, "u".repeat(600))))?.code).toBe(
      "INVALID_KEY",
    );
  });
});
