import { describe, expect, it } from "vitest";
import { defaultRoutingConfig } from "../../src/keys/index.js";
import { isSessiondError } from "../../src/model/errors.js";

function fieldOf(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return isSessiondError(error, "INVALID_ARGUMENT") ? error.details?.field : "other error";
  }
  return "no error";
}

describe("defaultRoutingConfig", () => {
  it("fills private defaults", () => {
    expect(defaultRoutingConfig()).toEqual({
      defaultAgent: "main",
      agents: ["main"],
      scope: "default",
      dmScope: "per-channel-peer",
      identityLinks: {},
    });
  });

  it("keeps given values and lists the default agent as the only agent", () => {
    const config = defaultRoutingConfig({
      defaultAgent: "ops",
      scope: "locrew",
      groupScope: "per-group-sender",
    });
    expect(config.agents).toEqual(["ops"]);
    expect(config.scope).toBe("locrew");
    expect(config.groupScope).toBe("per-group-sender");
  });

  it("copies the identity links so later edits of the input do not change routing", () => {
    const links = { a: ["telegram:1", "slack:2"] };
    const config = defaultRoutingConfig({ identityLinks: links });
    links.a.push("discord:dm:3");
    expect(config.identityLinks).toEqual({ a: ["telegram:1", "slack:2"] });
  });

  it.each([
    ["scope", { scope: "nope" }],
    ["dmScope", { dmScope: "per-account-channel-peer" }],
    ["groupScope", { groupScope: "per-sender" }],
    ["groupScopeByChannel.slack", { groupScopeByChannel: { slack: "x" } }],
    ["defaultAgent", { defaultAgent: "" }],
    ["defaultAgent", { defaultAgent: "a:b" }],
    ["defaultAgent", { defaultAgent: "main", agents: ["ops"] }],
    ["agents[1]", { agents: ["main", ""] }],
  ])("rejects a bad %s with INVALID_ARGUMENT", (field, partial) => {
    expect(fieldOf(() => defaultRoutingConfig(partial as never))).toBe(field);
  });
});
