import { describe, expect, it } from "vitest";
import type { RoutingConfig } from "../../src/keys/index.js";
import { defaultRoutingConfig, identityLinkMerges, linkedKey, routeEnvelope } from "../../src/keys/index.js";
import type { Chat, Envelope } from "../../src/model/envelope.js";
import { isSessiondError } from "../../src/model/errors.js";

function env(channel: string, chat: Chat, senderId: string, extra: Partial<Envelope> = {}): Envelope {
  return { channel, chat, sender: { id: senderId }, text: "hi", ...extra };
}

function key(envelope: Envelope, partial: Partial<RoutingConfig> = {}): string {
  return routeEnvelope(envelope, defaultRoutingConfig(partial)).key;
}

const alice = { alice: ["telegram:123456789", "discord:dm:987654321098765432"] };
const telegramDm = env("telegram", { type: "direct", id: "123456789" }, "123456789");
const discordDm = env("discord", { type: "direct", id: "c" }, "987654321098765432");

describe("identity links", () => {
  it("every listed account uses the key of the first account", () => {
    expect(key(telegramDm, { identityLinks: alice })).toBe("telegram:123456789");
    expect(key(discordDm, { identityLinks: alice })).toBe("telegram:123456789");
  });

  it("the first account wins: reversing the list moves the shared key", () => {
    const reversed = { alice: ["discord:dm:987654321098765432", "telegram:123456789"] };
    expect(key(telegramDm, { identityLinks: reversed })).toBe("discord:dm:987654321098765432");
  });

  it("matches case-insensitively and keeps the first account as written", () => {
    const links = { bob: ["Slack:U0ABC", "TELEGRAM:55"] };
    expect(key(env("telegram", { type: "direct", id: "55" }, "55"), { identityLinks: links })).toBe(
      "Slack:U0ABC",
    );
    expect(key(env("slack", { type: "direct", id: "D" }, "u0abc"), { identityLinks: links })).toBe(
      "Slack:U0ABC",
    );
    expect(linkedKey("slack:u0abc", links)).toBe("Slack:U0ABC");
  });

  it("leaves unlisted accounts alone", () => {
    expect(key(env("telegram", { type: "direct", id: "1" }, "1"), { identityLinks: alice })).toBe(
      "telegram:1",
    );
    expect(linkedKey("telegram:1234567890", alice)).toBe("telegram:1234567890");
  });

  it("applies to direct chats only: a group whose key equals a listed account is not merged", () => {
    const links = { carol: ["slack:U1", "slack:G1"] };
    expect(key(env("slack", { type: "group", id: "G1" }, "U1"), { identityLinks: links })).toBe("slack:G1");
    expect(key(env("slack", { type: "direct", id: "D" }, "G1"), { identityLinks: links })).toBe("slack:U1");
  });

  it("with the multi-agent prefix, matches the un-prefixed part and keeps the routed agent's prefix", () => {
    const config = { agents: ["main", "ops"], identityLinks: alice };
    expect(key(discordDm, config)).toBe("main:telegram:123456789");
    expect(key({ ...discordDm, agent: "ops" }, config)).toBe("ops:telegram:123456789");
  });

  it("is matched against the key the dmScope produced", () => {
    const links = { dave: ["direct:1", "direct:2"] };
    expect(
      key(env("slack", { type: "direct", id: "D" }, "2"), { dmScope: "per-peer", identityLinks: links }),
    ).toBe("direct:1");
  });

  it("rejects an account listed under two people, and an invalid account", () => {
    const code = (links: Record<string, string[]>) => {
      try {
        defaultRoutingConfig({ identityLinks: links });
      } catch (error) {
        return isSessiondError(error) ? error.code : "other";
      }
      return "none";
    };
    expect(code({ a: ["telegram:1", "slack:x"], b: ["SLACK:X"] })).toBe("INVALID_ARGUMENT");
    expect(code({ a: ["telegram:1", ""] })).toBe("INVALID_ARGUMENT");
    expect(code({ a: ["telegram:1", "telegram:1"] })).toBe("none");
  });
});

describe("identityLinkMerges", () => {
  it("reports accounts that new links merge into the first account", () => {
    const existing = ["telegram:123456789", "discord:dm:987654321098765432", "slack:U1"];
    expect(identityLinkMerges(existing, {}, alice)).toEqual([
      { from: "discord:dm:987654321098765432", to: "telegram:123456789" },
    ]);
  });

  it("reports the old shared key when the first account changes", () => {
    const reversed = { alice: ["discord:dm:987654321098765432", "telegram:123456789"] };
    expect(identityLinkMerges(["telegram:123456789"], alice, reversed)).toEqual([
      { from: "telegram:123456789", to: "discord:dm:987654321098765432" },
    ]);
  });

  it("reports nothing when the links do not change, or when they are removed (a split)", () => {
    const existing = ["telegram:123456789", "discord:dm:987654321098765432"];
    expect(identityLinkMerges(existing, alice, alice)).toEqual([]);
    expect(identityLinkMerges(existing, alice, {})).toEqual([]);
  });

  it("matches case-insensitively", () => {
    expect(identityLinkMerges(["DISCORD:DM:987654321098765432"], {}, alice)).toEqual([
      { from: "DISCORD:DM:987654321098765432", to: "telegram:123456789" },
    ]);
  });

  it("keeps the agent prefix and the thread suffix", () => {
    const existing = ["ops:discord:dm:987654321098765432", "main:discord:dm:987654321098765432:thread:t1"];
    expect(identityLinkMerges(existing, {}, alice, ["main", "ops"])).toEqual([
      { from: "ops:discord:dm:987654321098765432", to: "ops:telegram:123456789" },
      { from: "main:discord:dm:987654321098765432:thread:t1", to: "main:telegram:123456789:thread:t1" },
    ]);
  });

  it("agrees with routeEnvelope: the reported target is where the account's messages now go", () => {
    const config = { agents: ["main", "ops"], identityLinks: alice };
    const before = routeEnvelope(discordDm, defaultRoutingConfig({ agents: ["main", "ops"] })).key;
    const [merge] = identityLinkMerges([before], {}, alice, ["main", "ops"]);
    expect(merge?.from).toBe(before);
    expect(merge?.to).toBe(key(discordDm, config));
  });

  it("lists each key once", () => {
    const existing = ["discord:dm:987654321098765432", "discord:dm:987654321098765432"];
    expect(identityLinkMerges(existing, {}, alice)).toHaveLength(1);
  });
});
