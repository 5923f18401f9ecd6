import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client, type Harness, startHarness, TOKEN } from "./helpers.js";

/** What sessions.fork, sessions.rewind and sessions.branches refuse, before the engine is asked anything. */
describe("websocket fork, rewind and branches: parameters", () => {
  let h: Harness;
  let client: Client;

  beforeAll(async () => {
    h = await startHarness();
    await h.engine.append("telegram:7", [{ type: "message", role: "user", content: "hi" }]);
    client = await Client.open(h.url({ token: TOKEN }));
  });
  afterAll(async () => {
    await client.close();
    await h.close();
  });

  const refused = async (method: string, params: Record<string, unknown>) => {
    const res = await client.request(method, params);
    expect(res.ok).toBe(false);
    return res.error;
  };

  it("refuses parameters a method does not take, naming the ones it takes", async () => {
    expect(await refused("sessions.fork", { session: "telegram:7", atSeq: 1 })).toEqual({
      code: "INVALID_ARGUMENT",
      message: "sessions.fork takes session, at_seq, to_key; unknown: atSeq",
    });
    expect(await refused("sessions.branches", { session: "telegram:7", all: true })).toMatchObject({
      code: "INVALID_ARGUMENT",
    });
  });

  it("refuses a seq that is not a positive integer, a missing to_seq and a bad to_key", async () => {
    for (const at_seq of [0, "1", 1.5]) {
      expect(await refused("sessions.fork", { session: "telegram:7", at_seq })).toMatchObject({
        code: "INVALID_ARGUMENT",
        message: expect.stringContaining("params.at_seq must be an integer from 1"),
      });
    }
    expect(await refused("sessions.rewind", { session: "telegram:7" })).toMatchObject({
      code: "INVALID_ARGUMENT",
      message: expect.stringContaining("params.to_seq"),
    });
    expect(
      await refused("sessions.rewind", { session: "telegram:7", to_seq: 1, expect_head: -1 }),
    ).toMatchObject({
      code: "INVALID_ARGUMENT",
      message: expect.stringContaining("params.expect_head"),
    });
    expect(await refused("sessions.fork", { session: "telegram:7", to_key: "a\u0000" })).toMatchObject({
      code: "INVALID_KEY",
    });
  });

  it("answers SESSION_NOT_FOUND for a key with no session", async () => {
    for (const [method, params] of [
      ["sessions.fork", {}],
      ["sessions.rewind", { to_seq: 1 }],
      ["sessions.branches", {}],
    ] as const) {
      expect(await refused(method, { session: "telegram:nobody", ...params })).toMatchObject({
        code: "SESSION_NOT_FOUND",
      });
    }
  });
});
