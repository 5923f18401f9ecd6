import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEngine, type Engine } from "../../../src/engine.js";
import { createMetrics } from "../../../src/gateway/metrics/recorder.js";
import { documentedApp } from "../../../src/gateway/routes/documented.js";
import {
  EARLY_DOCUMENTED,
  LATE_DOCUMENTED,
  METRICS_DOCUMENTED,
} from "../../../src/gateway/routes/documented-paths.js";
import { json, memoryLogger, startTestGateway, type TestGateway, TOKEN } from "./helpers.js";

const dir = mkdtempSync(join(tmpdir(), "sessiond-documented-"));
let engine: Engine;
let gw: TestGateway;
beforeAll(async () => {
  engine = await createEngine({ dataDir: join(dir, "data") });
  gw = await startTestGateway();
});
afterAll(async () => {
  await gw.stop();
  await engine.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("the routes declared with zod schemas, answered before they load", () => {
  it("the gateway's list of their paths is exactly the routes the modules declare, in order", () => {
    const metrics = createMetrics(engine);
    const app = documentedApp(
      {
        engine,
        token: TOKEN,
        logger: memoryLogger([]),
        bodyLimit: 1024,
        trustProxyHeader: undefined,
        shutdownSignal: new AbortController().signal,
      },
      metrics,
    );
    metrics.stop();
    const declared = app.routes
      .filter((r) => r.method !== "ALL" && r.path !== "*" && !r.path.endsWith("/*"))
      .map((r) => `${r.method} ${r.path}`)
      // A route's validators are entries of their own under the same method and path.
      .filter((route, i, routes) => routes.indexOf(route) === i);
    const listed = [...EARLY_DOCUMENTED, ...METRICS_DOCUMENTED, ...LATE_DOCUMENTED].map(
      (r) => `${r.method} ${r.path}`,
    );
    expect(listed).toEqual(declared);
  });

  it("a documented path under another method is a 405 naming the methods it takes, before any load", async () => {
    const res = await fetch(`${gw.url}/api/agents/main/duplicate`, {
      method: "GET",
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("POST");
  });

  it("a documented route's bad query is the gateway's 400 with its request id, through the loaded routes", async () => {
    const res = await fetch(`${gw.url}/api/sessions?limit=0`, {
      headers: { authorization: `Bearer ${TOKEN}`, "x-request-id": "req-documented-1" },
    });
    expect(res.status).toBe(400);
    expect(res.headers.get("x-request-id")).toBe("req-documented-1");
    expect((await json(res)).error?.code).toBe("INVALID_ARGUMENT");
  });
});
