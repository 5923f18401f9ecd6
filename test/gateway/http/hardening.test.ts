import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_JSON_DEPTH } from "../../../src/gateway/body.js";
import { serverOptions } from "../../../src/gateway/connection-limits.js";
import { statusOf } from "../../../src/gateway/errors.js";
import { SessiondError } from "../../../src/model/errors.js";
import type { Runtime, RuntimeEvent } from "../../../src/runtimes/index.js";
import { BODY_ROUTES, startTestGateway, type TestGateway, TOKEN } from "./helpers.js";

/** A raw connection to the gateway, and a promise that settles when the gateway closes it. */
function rawSocket(url: string): Promise<{ socket: Socket; closed: Promise<string> }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      let received = "";
      socket.on("data", (chunk) => {
        received += chunk.toString("latin1");
      });
      const closed = new Promise<string>((done) => socket.once("close", () => done(received)));
      resolve({ socket, closed });
    });
    socket.once("error", reject);
  });
}

describe("gateway hardening", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway(
      {},
      { headersTimeoutMs: 300, requestTimeoutMs: 600, keepAliveTimeoutMs: 300 },
    );
  });
  afterAll(() => gw.stop());

  it("answers JSON nested thousands deep with 400 INVALID_JSON on every route that reads a body", async () => {
    const deep = `{"message":${"[".repeat(5_000)}${"]".repeat(5_000)},"peer":"p","session_id":"admin-x"}`;
    for (const [method, path] of BODY_ROUTES) {
      const res = await gw.api(path, { method, headers: { "content-type": "application/json" }, body: deep });
      expect([path, res.status]).toEqual([path, 400]);
      expect((await res.json()).error.code).toBe("INVALID_JSON");
    }
    // Nesting up to the limit is still a body like any other.
    const nested = (depth: number): unknown => (depth <= 1 ? {} : { a: nested(depth - 1) });
    const ok = await gw.api("/api/hooks/main/push", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ entity: "e1", ...(nested(MAX_JSON_DEPTH) as object) }),
    });
    expect(ok.status).toBe(200);
  });

  it("closes a connection that sends nothing once the headers timeout passes", async () => {
    const { closed } = await rawSocket(gw.url);
    expect(await closed).toMatch(/^HTTP\/1\.1 408|^$/);
  }, 15_000);

  it("closes a slowloris connection whose headers never end, and one whose body never ends", async () => {
    const headers = await rawSocket(gw.url);
    headers.socket.write("POST /api/chat HTTP/1.1\r\nHost: x\r\n");
    const dripHeaders = setInterval(() => headers.socket.write("X-A: b\r\n"), 50);
    const body = await rawSocket(gw.url);
    body.socket.write(
      `POST /api/chat HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\n` +
        "Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{",
    );
    const dripBody = setInterval(() => body.socket.write(" "), 50);
    try {
      expect(await headers.closed).toMatch(/^HTTP\/1\.1 408|^$/);
      expect(await body.closed).toMatch(/^HTTP\/1\.1 408|^$/);
    } finally {
      clearInterval(dripHeaders);
      clearInterval(dripBody);
    }
  }, 15_000);

  it("honours Connection: close on an SSE reply", async () => {
    const { socket, closed } = await rawSocket(gw.url);
    const body = JSON.stringify({ message: "hi", session_id: "admin-sse-close" });
    socket.write(
      `POST /api/chat HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\n` +
        "Content-Type: application/json\r\nAccept: text/event-stream\r\nConnection: close\r\n" +
        `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    const received = await closed;
    expect(received).toMatch(/^HTTP\/1\.1 200/);
    expect(received.toLowerCase()).toContain("\r\nconnection: close\r\n");
    expect(received).toContain("event: done");
  });
});

describe("connection limits", () => {
  it("default to 10 s for headers, 30 s for the request and 5 s idle between requests", () => {
    expect(serverOptions({})).toMatchObject({
      headersTimeout: 10_000,
      requestTimeout: 30_000,
      keepAliveTimeout: 5_000,
    });
    expect(serverOptions({}).connectionsCheckingInterval).toBeLessThanOrEqual(1_000);
  });
});

describe("a full write queue", () => {
  it("is 503 STORE_BUSY with Retry-After", async () => {
    expect(statusOf("STORE_BUSY")).toBe(503);
    const busy: Runtime = {
      kind: "test",
      // biome-ignore lint/correctness/useYield: it fails before yielding anything
      async *run(): AsyncGenerator<RuntimeEvent> {
        throw new SessiondError("STORE_BUSY", "the write queue is full");
      },
    };
    const gw = await startTestGateway({}, { runtimes: new Map([["main", busy]]) });
    try {
      const res = await gw.api("/api/webhook", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ peer: "p", message: "x" }),
      });
      expect(res.status).toBe(503);
      expect(res.headers.get("retry-after")).toBe("1");
      expect((await res.json()).error.code).toBe("STORE_BUSY");
    } finally {
      await gw.stop();
    }
  });
});
