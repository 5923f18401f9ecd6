import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { json, startTestGateway, type TestGateway, TOKEN } from "./helpers.js";

/** A GET with the path sent exactly as given (fetch would normalise `..`). */
function rawGet(url: string, path: string): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({ hostname, port, path, method: "GET" }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }),
      );
    });
    req.on("error", reject);
    req.end();
  });
}

describe("the gateway serves the dashboard", () => {
  let gw: TestGateway;
  let parent: string;
  let webDir: string;

  beforeAll(async () => {
    parent = mkdtempSync(join(tmpdir(), "sessiond-webdir-"));
    webDir = join(parent, "web");
    mkdirSync(join(webDir, "assets"), { recursive: true });
    writeFileSync(join(parent, "secret.txt"), "TOP-SECRET");
    writeFileSync(join(webDir, "index.html"), "<!doctype html><title>dash</title>");
    writeFileSync(join(webDir, "assets", "index-abc123.js"), "console.log(1)");
    writeFileSync(join(webDir, "assets", "index-abc123.css"), "body{}");
    gw = await startTestGateway({}, { webDir });
  });

  afterAll(async () => {
    await gw.stop();
    rmSync(parent, { recursive: true, force: true });
  });

  it("answers / and client routes with index.html, without a token", async () => {
    for (const path of [
      "/",
      "/sessions",
      `/sessions/${encodeURIComponent("telegram:42")}`,
      "/chat?session=admin-1",
    ]) {
      const res = await fetch(`${gw.url}${path}`);
      expect(res.status, path).toBe(200);
      expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
      expect(res.headers.get("cache-control")).toBe("no-cache");
      expect(res.headers.get("content-security-policy")).toContain("default-src 'self'");
      expect(await res.text()).toContain("<title>dash</title>");
    }
  });

  it("serves hashed assets with their content types, cached for good", async () => {
    const js = await fetch(`${gw.url}/assets/index-abc123.js`);
    expect(js.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(js.headers.get("cache-control")).toContain("immutable");
    expect(await js.text()).toBe("console.log(1)");
    const css = await fetch(`${gw.url}/assets/index-abc123.css`);
    expect(css.headers.get("content-type")).toBe("text/css; charset=utf-8");
    const missing = await fetch(`${gw.url}/assets/nope.js`);
    expect(missing.status).toBe(404);
  });

  it("keeps every API path behind the token", async () => {
    for (const path of [
      "/api/sessions",
      "/api/agents",
      "/api/stats/overview",
      "/metrics",
      "/api/nope",
      "/v1/models",
    ]) {
      const res = await fetch(`${gw.url}${path}`);
      expect(res.status, path).toBe(401);
    }
    expect((await fetch(`${gw.url}/health`)).status).toBe(200);
  });

  it("never serves a file outside its folder", async () => {
    for (const path of [
      "/..%2fsecret.txt",
      "/assets/..%2f..%2fsecret.txt",
      "/%2e%2e/secret.txt",
      "/../secret.txt",
    ]) {
      const res = await rawGet(gw.url, path);
      expect(res.body, path).not.toContain("TOP-SECRET");
    }
  });
});

describe("the gateway without a built dashboard", () => {
  it("says how to build it, and serves nothing when turned off", async () => {
    const missing = join(tmpdir(), `sessiond-no-web-${process.pid}`);
    const gw = await startTestGateway({}, { webDir: missing });
    try {
      const res = await fetch(`${gw.url}/sessions`);
      expect(res.status).toBe(503);
      expect(await res.text()).toContain("npm run build");
    } finally {
      await gw.stop();
    }
    const off = await startTestGateway({}, { webDir: false });
    try {
      expect((await fetch(`${off.url}/`)).status).toBe(401);
    } finally {
      await off.stop();
    }
  });
});

const auth = { headers: { authorization: `Bearer ${TOKEN}` } };

describe("the dashboard's API", () => {
  let gw: TestGateway;

  beforeAll(async () => {
    gw = await startTestGateway({ agents: ["main", "ops"] });
    await gw.engine.append("telegram:1", [{ type: "message", role: "user", content: "hello **there**" }], {
      init: { agent: "main", channel: "telegram", createdBy: "1" },
    });
  });

  afterAll(async () => {
    await gw.stop();
  });

  it("lists the agents to filter by", async () => {
    const body = (await (await gw.api("/api/agents")).json()) as unknown as {
      agents: Array<{ name: string; runtime: string }>;
      defaultAgent: string;
    };
    expect(body.agents.map((a) => [a.name, a.runtime])).toEqual([
      ["main", "echo"],
      ["ops", "echo"],
    ]);
    expect(body.defaultAgent).toBe("main");
  });

  it("exports a session in each format, and refuses an unknown one", async () => {
    const md = await gw.api(`/api/sessions/${encodeURIComponent("telegram:1")}/export?format=md`);
    expect(md.headers.get("content-type")).toBe("text/markdown; charset=utf-8");
    expect(await md.text()).toContain("hello");
    const jsonl = await gw.api(`/api/sessions/${encodeURIComponent("telegram:1")}/export?format=jsonl`);
    const lines = (await jsonl.text()).trim().split("\n");
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) JSON.parse(line);
    const bad = await gw.api(`/api/sessions/${encodeURIComponent("telegram:1")}/export?format=pdf`);
    expect(bad.status).toBe(400);
    expect((await json(bad)).error.code).toBe("INVALID_ARGUMENT");
    const none = await gw.api(`/api/sessions/${encodeURIComponent("telegram:404")}/export`);
    expect(none.status).toBe(404);
  });

  it("searches sessions by text through GET /api/sessions?q=", async () => {
    await gw.engine.append("discord:dm:5", [{ type: "message", role: "user", content: "hi" }], {
      init: { agent: "ops", channel: "discord", createdBy: "5" },
    });
    const found = (await (await fetch(`${gw.url}/api/sessions?q=TELEGRAM`, auth)).json()) as {
      sessions: Array<{ key: string }>;
      scanned: number;
      partial: boolean;
    };
    expect(found.sessions.map((s) => s.key)).toEqual(["telegram:1"]);
    expect(found).toMatchObject({ scanned: 2, partial: false });
    const filtered = (await (await gw.api("/api/sessions?q=TELEGRAM&agent=ops")).json()) as {
      sessions: unknown[];
    };
    expect(filtered.sessions).toEqual([]);
    const long = await gw.api(`/api/sessions?q=${"x".repeat(201)}`);
    expect(long.status).toBe(400);
    expect((await json(long)).error.code).toBe("INVALID_ARGUMENT");
  });

  it("refuses an overview window out of bounds", async () => {
    const res = await gw.api("/api/stats/overview?hours=1000");
    expect(res.status).toBe(400);
    expect((await json(res)).error.code).toBe("INVALID_ARGUMENT");
  });
});
