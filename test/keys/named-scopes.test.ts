import { describe, expect, it } from "vitest";
import type { NamedScope, RoutingConfig } from "../../src/keys/index.js";
import { defaultRoutingConfig, routeEnvelope } from "../../src/keys/index.js";
import type { Chat, Envelope } from "../../src/model/envelope.js";
import { isSessiondError } from "../../src/model/errors.js";

function env(channel: string, chat: Chat, senderId: string, extra: Partial<Envelope> = {}): Envelope {
  return { channel, chat, sender: { id: senderId }, text: "hi", ...extra };
}

function key(scope: NamedScope, envelope: Envelope, partial: Partial<RoutingConfig> = {}): string {
  return routeEnvelope(envelope, defaultRoutingConfig({ ...partial, scope })).key;
}

describe("named scopes", () => {
  const dm = env("telegram", { type: "direct", id: "d1" }, "s1");
  const group = env("telegram", { type: "group", id: "g1" }, "s1");
  const groupThread = env("telegram", { type: "group", id: "g1", threadId: "t1" }, "s1");

  it("zeroclaw-sender → <channel>:<senderId>, one session per sender across chats", () => {
    expect(key("zeroclaw-sender", dm)).toBe("telegram:s1");
    expect(key("zeroclaw-sender", group)).toBe("telegram:s1");
    expect(key("zeroclaw-sender", env("telegram", { type: "group", id: "g1" }, "s2"))).toBe("telegram:s2");
    expect(key("zeroclaw-sender", env("slack", { type: "direct", id: "d1" }, "s1"))).toBe("slack:s1");
  });

  it("zeroclaw-reply-target → <channel>:<replyTarget ?? chatId>", () => {
    expect(key("zeroclaw-reply-target", group)).toBe("telegram:g1");
    expect(key("zeroclaw-reply-target", env("telegram", { type: "group", id: "g1" }, "s2"))).toBe(
      "telegram:g1",
    );
    expect(key("zeroclaw-reply-target", { ...group, replyTarget: "rt9" })).toBe("telegram:rt9");
  });

  it("zeroclaw-thread → <channel>:<target>:<threadId | ->:<senderId>", () => {
    expect(key("zeroclaw-thread", groupThread)).toBe("telegram:g1:t1:s1");
    expect(key("zeroclaw-thread", group)).toBe("telegram:g1:-:s1");
    expect(key("zeroclaw-thread", { ...groupThread, replyTarget: "rt" })).toBe("telegram:rt:t1:s1");
  });

  it("ZeroClaw scopes take the agent prefix when more than one agent is configured", () => {
    const agents = { agents: ["main", "ops"] };
    expect(key("zeroclaw-sender", { ...dm, agent: "ops" }, agents)).toBe("ops:telegram:s1");
    expect(key("zeroclaw-reply-target", group, agents)).toBe("main:telegram:g1");
    expect(key("zeroclaw-thread", groupThread, agents)).toBe("main:telegram:g1:t1:s1");
  });

  it("crabtalk → <agent>:<senderId>, always naming the agent", () => {
    expect(key("crabtalk", dm)).toBe("main:s1");
    expect(key("crabtalk", group)).toBe("main:s1");
    expect(key("crabtalk", { ...dm, agent: "ops" }, { agents: ["main", "ops"] })).toBe("ops:s1");
  });

  it("locrew → <agent>:<channel>:<chatId>: a DM and two channels are three sessions of one agent", () => {
    const keys = [
      key("locrew", env("slack", { type: "direct", id: "D1" }, "u1")),
      key("locrew", env("slack", { type: "channel", id: "C1" }, "u1")),
      key("locrew", env("slack", { type: "channel", id: "C2" }, "u1")),
    ];
    expect(keys).toEqual(["main:slack:D1", "main:slack:C1", "main:slack:C2"]);
    expect(new Set(keys).size).toBe(3);
    expect(key("locrew", env("slack", { type: "channel", id: "C1" }, "u2"))).toBe("main:slack:C1");
  });

  it("identity links do not apply outside the default scope", () => {
    const identityLinks = { alice: ["telegram:s9", "telegram:s1"] };
    expect(key("zeroclaw-sender", dm, { identityLinks })).toBe("telegram:s1");
  });

  it("empty components are INVALID_ARGUMENT naming the field", () => {
    const fieldOf = (fn: () => unknown) => {
      try {
        fn();
      } catch (error) {
        return isSessiondError(error, "INVALID_ARGUMENT") ? error.details?.field : "other";
      }
      return "none";
    };
    expect(fieldOf(() => key("zeroclaw-reply-target", { ...group, replyTarget: "" }))).toBe("replyTarget");
    expect(fieldOf(() => key("crabtalk", env("telegram", { type: "direct", id: "d" }, "")))).toBe(
      "sender.id",
    );
    expect(fieldOf(() => key("locrew", env("slack", { type: "channel", id: "" }, "u")))).toBe("chat.id");
  });
});
