import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Harness, startHarness, TOKEN, upgradeStatus } from "./helpers.js";

describe("websocket auth at upgrade", () => {
  let h: Harness;

  beforeEach(async () => {
    h = await startHarness();
  });

  afterEach(async () => {
    await h.close();
  });

  it("refuses with 401 without a token or with a wrong one", async () => {
    expect(await upgradeStatus(h.url())).toBe(401);
    expect(await upgradeStatus(h.url({ token: "wrong" }))).toBe(401);
    const sameLength = `${TOKEN.slice(0, -1)}x`;
    expect(await upgradeStatus(h.url({ token: sameLength }))).toBe(401);
    expect(await upgradeStatus(h.url(), { authorization: `Bearer ${sameLength}` })).toBe(401);
    expect(await upgradeStatus(h.url(), { "x-sessiond-token": "nope" })).toBe(401);
  });

  it("accepts the token as a Bearer header, an X-Sessiond-Token header or ?token=", async () => {
    expect(await upgradeStatus(h.url(), { authorization: `Bearer ${TOKEN}` })).toBe("open");
    expect(await upgradeStatus(h.url(), { "x-sessiond-token": TOKEN })).toBe("open");
    expect(await upgradeStatus(h.url({ token: TOKEN }))).toBe("open");
  });

  it("does not upgrade other paths", async () => {
    const other = h.url({ token: TOKEN }).replace("/ws?", "/elsewhere?");
    expect(await upgradeStatus(other)).toBe(404);
  });
});
