import { describe, expect, it } from "vitest";
import { defaultRoutingConfig, initForKey, routeEnvelope } from "../../src/keys/index.js";
import type { Envelope } from "../../src/model/envelope.js";
import { isSessiondError } from "../../src/model/errors.js";

describe("initForKey", () => {
  it.each([
    ["telegram:123", { agent: "main", channel: "telegram", createdBy: "123" }],
    ["discord:dm:987654321098765432", { agent: "main", channel: "discord", createdBy: "987654321098765432" }],
    ["discord:123456789012345678:987", { agent: "main", channel: "discord", createdBy: "987" }],
    ["msteams:19:abc@thread.v2", { agent: "main", channel: "msteams", createdBy: "19:abc@thread.v2" }],
    ["slack:C1:thread:171.5", { agent: "main", channel: "slack", createdBy: "C1" }],
    ["app_api:bob/s1", { agent: "main", channel: "app_api", createdBy: "bob" }],
    ["app_api:bob%2Fx", { agent: "main", channel: "app_api", createdBy: "bob/x" }],
    ["app_api:%E0%A4%A", { agent: "main", channel: "app_api", createdBy: "%E0%A4%A" }],
    ["admin-session", { agent: "main", channel: "web", createdBy: "admin" }],
    ["admin-conn-c42", { agent: "main", channel: "web", createdBy: "admin" }],
    ["openai-compat:1.2.3.4", { agent: "main", channel: "openai-compat", createdBy: "1.2.3.4" }],
    ["agent:ops:subagent:job-1", { agent: "ops", channel: "subagent", createdBy: "ops" }],
    ["webhook:ops:alert:ts-5", { agent: "ops", channel: "webhook", createdBy: "webhook" }],
    ["p2p:u1:main", { agent: "main", channel: "p2p", createdBy: "u1" }],
    ["p2p:u1:ops:for:alice", { agent: "ops", channel: "p2p", createdBy: "u1" }],
    ["main:main", { agent: "main", channel: "unknown", createdBy: "unknown" }],
    ["my-session", { agent: "main", channel: "unknown", createdBy: "unknown" }],
  ])("%s", (key, expected) => {
    expect(initForKey(key, "main")).toEqual(expected);
  });

  it("reads a leading agent id when it is a configured agent", () => {
    expect(initForKey("ops:telegram:5", "main", ["main", "ops"])).toEqual({
      agent: "ops",
      channel: "telegram",
      createdBy: "5",
    });
    expect(initForKey("ops:telegram:5", "main")).toEqual({ agent: "main", channel: "ops", createdBy: "5" });
    expect(initForKey("ops:main", "main", ["main", "ops"]).agent).toBe("ops");
  });

  it("agrees with routeEnvelope on channel keys", () => {
    const config = defaultRoutingConfig({ agents: ["main", "ops"] });
    const envelope: Envelope = {
      agent: "ops",
      channel: "discord",
      chat: { type: "group", id: "G1" },
      sender: { id: "u7" },
      text: "hi",
    };
    const route = routeEnvelope(envelope, config);
    expect(initForKey(route.key, config.defaultAgent, config.agents)).toEqual({
      agent: route.agent,
      channel: route.channel,
      createdBy: route.createdBy,
    });
  });

  it("rejects an invalid key with INVALID_KEY", () => {
    expect(() => initForKey("", "main")).toThrow();
    try {
      initForKey("a\u0000b", "main");
      expect.unreachable();
    } catch (error) {
      expect(isSessiondError(error, "INVALID_KEY")).toBe(true);
    }
  });
});
