import { describe, expect, it } from "vitest";
import { statusOf } from "../../../src/gateway/errors.js";
import type { Runtime, RuntimeEvent } from "../../../src/runtimes/index.js";
import { postJson, startTestGateway } from "./helpers.js";

describe("error mapping", () => {
  it("maps engine codes to statuses", () => {
    expect(statusOf("INVALID_KEY")).toBe(400);
    expect(statusOf("INVALID_ENTRY")).toBe(400);
    expect(statusOf("SESSION_NOT_FOUND")).toBe(404);
    expect(statusOf("SESSION_BUSY")).toBe(429);
    expect(statusOf("NOTHING_TO_COMPACT")).toBe(409);
    expect(statusOf("TURN_FAILED")).toBe(502);
    expect(statusOf("STORE_CORRUPT")).toBe(500);
    expect(statusOf("SESSION_CHANGED")).toBe(409);
    for (const code of ["STORE_CLOSED", "STORE_UNAVAILABLE", "STORE_FAILED", "STORE_BUSY"] as const)
      expect(statusOf(code)).toBe(503);
  });

  it("answers a failing runtime with a JSON error and no internals", async () => {
    const failing: Runtime = {
      kind: "test",
      // biome-ignore lint/correctness/useYield: it fails before yielding anything
      async *run(): AsyncGenerator<RuntimeEvent> {
        throw new Error("upstream exploded at /secret/path");
      },
    };
    const gw = await startTestGateway({}, { runtimes: new Map([["main", failing]]) });
    try {
      const res = await gw.api("/api/chat", postJson({ message: "x", session_id: "admin-fail" }));
      expect(res.status).toBe(502);
      const body = await res.json();
      expect(Object.keys(body)).toEqual(["error"]);
      expect(typeof body.error.code).toBe("string");
      const sse = await gw.api(
        "/api/chat",
        postJson({ message: "x", session_id: "admin-fail" }, { accept: "text/event-stream" }),
      );
      expect(await sse.text()).toMatch(/event: error\ndata: \{"error":/);
    } finally {
      await gw.stop();
    }
  });
});
