import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { json, postJson, startTestGateway, type TestGateway, TOKEN } from "./helpers.js";

let gw: TestGateway;

beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(async () => {
  await gw.stop();
});

/** A request whose path is sent exactly as written (fetch would normalise `..`). */
function rawRequest(
  path: string,
  options: { method?: string; body?: string } = {},
): Promise<{ status: number; body: string }> {
  const url = new URL(gw.url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path,
        method: options.method ?? "GET",
        headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          body += chunk;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on("error", reject);
    req.end(options.body);
  });
}

describe("auth", () => {
  it("serves /health without a token", async () => {
    const res = await fetch(`${gw.url}/health`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: "ok" });
  });

  it("rejects a missing token with the JSON error shape", async () => {
    const res = await fetch(`${gw.url}/api/sessions`);
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toContain("Bearer");
    const body = await res.json();
    expect(body).toEqual({ error: { code: "UNAUTHORIZED", message: expect.any(String) } });
  });

  it("rejects a wrong token, on every route", async () => {
    for (const path of ["/api/sessions", "/v1/models", "/metrics", "/api/openapi.json", "/nope"]) {
      const res = await fetch(`${gw.url}${path}`, { headers: { authorization: "Bearer wrong" } });
      expect(res.status, path).toBe(401);
      expect((await json(res)).error.code).toBe("UNAUTHORIZED");
    }
    const other = await fetch(`${gw.url}/api/sessions`, { headers: { "x-sessiond-token": `${TOKEN}x` } });
    expect(other.status).toBe(401);
  });

  it("accepts the X-Sessiond-Token header, and GoClaw's X-Goclaw-Token", async () => {
    const res = await fetch(`${gw.url}/api/sessions`, { headers: { "x-sessiond-token": TOKEN } });
    expect(res.status).toBe(200);
    const goclaw = await fetch(`${gw.url}/api/sessions`, { headers: { "x-goclaw-token": TOKEN } });
    expect(goclaw.status).toBe(200);
    const wrong = await fetch(`${gw.url}/api/sessions`, { headers: { "x-goclaw-token": `${TOKEN}x` } });
    expect(wrong.status).toBe(401);
  });

  it("answers a malformed Authorization header 401 UNAUTHORIZED too, and a token in any case of Bearer", async () => {
    for (const authorization of ["Basic abc", "Bearer", `Bearer ${TOKEN} extra`, `bearer ${TOKEN}x`]) {
      const res = await fetch(`${gw.url}/api/sessions`, { headers: { authorization } });
      expect(res.status, authorization).toBe(401);
      expect((await json(res)).error.code).toBe("UNAUTHORIZED");
      expect(res.headers.get("www-authenticate")).toBe('Bearer realm="sessiond"');
    }
    const lower = await fetch(`${gw.url}/api/sessions`, { headers: { authorization: `bearer ${TOKEN}` } });
    expect(lower.status).toBe(200);
    expect(lower.headers.get("cache-control")).toBe("no-store");
  });

  it("refuses to start with a token a Bearer header cannot carry", async () => {
    await expect(startTestGateway({}, { token: "has spaces and ! marks" })).rejects.toMatchObject({
      code: "CONFIG_INVALID",
    });
  });

  it("keeps a caller's request id of word characters, replaces any other", async () => {
    const kept = await gw.api("/api/sessions", { headers: { "x-request-id": "req-42_a=" } });
    expect(kept.headers.get("x-request-id")).toBe("req-42_a=");
    const replaced = await gw.api("/api/sessions", { headers: { "x-request-id": "bad id;rm -rf" } });
    expect(replaced.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    const long = await gw.api("/api/sessions", { headers: { "x-request-id": "a".repeat(129) } });
    expect(long.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("never logs the token", () => {
    expect(JSON.stringify(gw.logs)).not.toContain(TOKEN);
    expect(gw.logs.some((l) => typeof l.requestId === "string" && l.path === "/api/sessions")).toBe(true);
  });
});

describe("chat and sessions", () => {
  it("runs a web chat turn and exposes the session through REST", async () => {
    const res = await gw.api("/api/chat", postJson({ message: "hello there", session_id: "admin-rest" }));
    expect(res.status).toBe(200);
    const reply = await res.json();
    expect(reply.key).toBe("admin-rest");
    // The key as the request named it, and the generation apart from it.
    expect(reply).toMatchObject({ session_id: "admin-rest", generation: 1 });
    expect(reply.reply).toContain("hello there");

    const list = await (await gw.api("/api/sessions?channel=web&sort=activity&limit=10")).json();
    expect(list.sessions.map((s: { key: string }) => s.key)).toContain("admin-rest");

    const one = await gw.api("/api/sessions/admin-rest");
    expect(one.status).toBe(200);
    expect((await one.json()).session).toMatchObject({ key: "admin-rest", agent: "main" });

    const history = await (await gw.api("/api/sessions/admin-rest/history?limit=1")).json();
    expect(history.entries).toHaveLength(1);
    expect(history.entries[0]).toMatchObject({ role: "assistant" });
    const all = await (await gw.api("/api/sessions/admin-rest/history?all=true")).json();
    expect(all.entries.map((e: { role: string }) => e.role)).toEqual(["user", "assistant"]);
  });

  it("paginates the session list with a cursor", async () => {
    for (const id of ["admin-p1", "admin-p2", "admin-p3"]) {
      await gw.api("/api/chat", postJson({ message: "x", session_id: id }));
    }
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await (
        await gw.api(`/api/sessions?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`)
      ).json();
      expect(page.sessions.length).toBeLessThanOrEqual(2);
      seen.push(...page.sessions.map((s: { key: string }) => s.key));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual(expect.arrayContaining(["admin-p1", "admin-p2", "admin-p3"]));
    expect(new Set(seen).size).toBe(seen.length);
  });

  it("streams a web chat turn as SSE", async () => {
    const res = await gw.api(
      "/api/chat",
      postJson({ message: "stream me", session_id: "admin-sse" }, { accept: "text/event-stream" }),
    );
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const text = await res.text();
    const deltas = [...text.matchAll(/event: delta\ndata: (.*)\n/g)].map((m) => JSON.parse(m[1] ?? "").text);
    const done = /event: done\ndata: (.*)\n/.exec(text);
    expect(deltas.length).toBeGreaterThan(1);
    expect(done).not.toBeNull();
    expect(JSON.parse(done?.[1] ?? "{}").reply).toBe(deltas.join(""));
  });

  it("compacts, resets and deletes", async () => {
    for (let i = 0; i < 4; i++)
      await gw.api("/api/chat", postJson({ message: `m${i}`, session_id: "admin-ops" }));
    const compact = await gw.api("/api/sessions/admin-ops/compact", { method: "POST" });
    expect(compact.status).toBe(200);
    expect(typeof (await compact.json()).summary).toBe("string");

    const inspect = await (await gw.api("/api/inspect")).json();
    const row = inspect.sessions.find((s: { key: string }) => s.key === "admin-ops");
    expect(row?.lastCompaction).not.toBeNull();
    expect(row?.queuedTurns).toBe(0);

    const reset = await gw.api("/api/sessions/admin-ops/reset", { method: "POST" });
    expect(reset.status).toBe(200);
    expect((await reset.json()).current.generation).toBe(2);

    const del = await gw.api("/api/sessions/admin-ops", { method: "DELETE" });
    expect(del.status).toBe(200);
    expect((await del.json()).deleted.sessions).toBe(2);
    const gone = await gw.api("/api/sessions/admin-ops");
    expect(gone.status).toBe(404);
    expect((await gone.json()).error.code).toBe("SESSION_NOT_FOUND");
  });

  it("answers unknown sessions with 404 everywhere", async () => {
    for (const [method, path] of [
      ["GET", "/api/sessions/admin-none"],
      ["GET", "/api/sessions/admin-none/history"],
      ["POST", "/api/sessions/admin-none/compact"],
      ["POST", "/api/sessions/admin-none/reset"],
      ["DELETE", "/api/sessions/admin-none"],
    ] as const) {
      const res = await gw.api(path, { method });
      expect(res.status, `${method} ${path}`).toBe(404);
      // One phrase, the engine's (the CLI prints the same).
      expect((await res.json()).error).toEqual({
        code: "SESSION_NOT_FOUND",
        message: 'no session for key "admin-none"',
      });
    }
  });

  it("routes webhook, App API and chat hooks to their keys", async () => {
    const hook = await (await gw.api("/api/webhook", postJson({ peer: "bob", message: "hi" }))).json();
    expect(hook.key).toBe("p2p:bob:main");
    const subject = await (
      await gw.api("/api/webhook", postJson({ peer: "bob", message: "hi", subject_ref: "ticket-9" }))
    ).json();
    expect(subject.key).toBe("p2p:bob:main:for:ticket-9");
    const web = await (
      await gw.api("/api/webhook", postJson({ peer: "bob", message: "hi", channel: "web" }))
    ).json();
    expect(web.key).toBe("admin-session");

    const app = await (await gw.api("/api/app/al%2Fice", postJson({ message: "hi" }))).json();
    expect(app.key).toBe("app_api:al%2Fice");
    const appSession = await (await gw.api("/api/app/alice/s%201", postJson({ message: "hi" }))).json();
    expect(appSession.key).toBe("app_api:alice/s%201");

    const mr = await (
      await gw.api("/api/hooks/main/gitlab", postJson({ object_attributes: { iid: 42 }, message: "opened" }))
    ).json();
    expect(mr.key).toBe("webhook:main:gitlab:42");
    const alert = await (await gw.api("/api/hooks/main/alert", postJson({ status: "firing" }))).json();
    expect(alert.key).toMatch(/^webhook:main:alert:ts-\d+$/);
    const unknown = await gw.api("/api/hooks/nobody/alert", postJson({}));
    expect(unknown.status).toBe(404);
  });

  it("rejects web chat session ids that are not admin sessions", async () => {
    const res = await gw.api("/api/chat", postJson({ message: "x", session_id: "telegram:1" }));
    expect(res.status).toBe(400);
    expect((await res.json()).error.code).toBe("INVALID_KEY");
  });
});

describe("bad input", () => {
  it("answers malformed JSON with 400 INVALID_JSON and stores nothing", async () => {
    const before = (await (await gw.api("/api/sessions?limit=1000")).json()).sessions.length;
    for (const body of ["{not json", "[1,2]", "", "null"]) {
      const res = await gw.api("/api/chat", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      });
      expect(res.status, body).toBe(400);
      expect((await res.json()).error.code).toBe("INVALID_JSON");
    }
    const missing = await gw.api("/api/chat", postJson({ session_id: "admin-x" }));
    expect(missing.status).toBe(400);
    expect((await missing.json()).error.code).toBe("INVALID_ARGUMENT");
    const after = (await (await gw.api("/api/sessions?limit=1000")).json()).sessions.length;
    expect(after).toBe(before);
  });

  it("answers bodies over the limit with 413", async () => {
    const big = "x".repeat(1024 * 1024 + 10);
    const res = await gw.api("/api/chat", postJson({ message: big, session_id: "admin-big" }));
    expect(res.status).toBe(413);
    expect((await res.json()).error.code).toBe("PAYLOAD_TOO_LARGE");
    expect((await gw.api("/api/sessions/admin-big")).status).toBe(404);
  });

  it("counts a streamed body without Content-Length against the limit", async () => {
    const chunk = new TextEncoder().encode("x".repeat(64 * 1024));
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent++ < 20) controller.enqueue(chunk);
        else controller.close();
      },
    });
    const res = await gw.api("/api/chat", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
      duplex: "half",
    } as RequestInit);
    expect(res.status).toBe(413);
  });

  it("rejects bad query values with 400", async () => {
    for (const q of ["limit=0", "limit=abc", "sort=size", "active=-5"]) {
      const res = await gw.api(`/api/sessions?${q}`);
      expect(res.status, q).toBe(400);
    }
  });

  it("treats encoded path tricks as key data, decoded once", async () => {
    await gw.api("/api/chat", postJson({ message: "secret", session_id: "admin-victim" }));
    const tricks = await rawRequest("/api/sessions/..%2Fadmin-victim");
    expect(tricks.status).toBe(404);
    expect(JSON.parse(tricks.body).error.code).toBe("SESSION_NOT_FOUND");
    // %252F decodes once to the literal key "..%2Fadmin-victim": still not the victim.
    const double = await rawRequest("/api/sessions/..%252Fadmin-victim/history");
    expect(double.status).toBe(404);
    const dotdot = await rawRequest("/api/sessions/%2E%2E%2F%2E%2E%2Fetc%2Fpasswd");
    expect(dotdot.status).toBe(404);
    const del = await rawRequest("/api/sessions/admin-victim%2F..%2F..", { method: "DELETE" });
    expect(del.status).toBe(404);
    expect((await gw.api("/api/sessions/admin-victim")).status).toBe(200);

    const control = await rawRequest("/api/sessions/bad%00key");
    expect(control.status).toBe(400);
    expect(JSON.parse(control.body).error.code).toBe("INVALID_KEY");
    const broken = await rawRequest("/api/sessions/bad%E0%A4key");
    expect(broken.status).toBe(400);
  });

  it("finds keys with slashes and colons when encoded", async () => {
    await gw.api("/api/app/carol/s1", postJson({ message: "hi" }));
    const res = await gw.api(`/api/sessions/${encodeURIComponent("app_api:carol/s1")}`);
    expect(res.status).toBe(200);
    expect((await res.json()).session.key).toBe("app_api:carol/s1");
  });
});

describe("operations", () => {
  it("serves Prometheus metrics", async () => {
    const res = await gw.api("/metrics");
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toMatch(/sessiond_turns_total\{agent="main",outcome="ok"\} \d+/);
    expect(text).toContain("sessiond_turn_duration_seconds_bucket");
    expect(text).toContain("sessiond_queue_depth");
    expect(text).toContain("sessiond_compactions_total 1");
    // The memory store has no transactions to count; metrics.test.ts counts SQLite's.
    expect(text).toContain("# TYPE sessiond_store_commit_batch_size histogram");
    expect(text).toMatch(/sessiond_append_entries_count [1-9]\d*/);
  });

  it("serves an OpenAPI document", async () => {
    const doc = await (await gw.api("/api/openapi.json")).json();
    expect(doc.openapi).toBe("3.1.0");
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(["/api/sessions", "/api/search", "/v1/chat/completions"]),
    );
    const ws = (doc as unknown as { "x-websocket": { methods: Record<string, { params: object }> } })[
      "x-websocket"
    ];
    expect(Object.keys(ws.methods["chat.send"]!.params)).toEqual([
      "message",
      "session",
      "agent",
      "incognito",
    ]);
    expect(Object.keys(ws.methods)).toHaveLength(15);
    expect(ws.methods["turns.get"]).toBeDefined();
    expect(Object.keys(ws.methods["sessions.rewind"]!.params)).toEqual(["session", "to_seq", "expect_head"]);
    expect(ws.methods["sessions.search"]).toBeDefined();
  });

  it("answers unknown routes with the JSON error shape", async () => {
    const res = await gw.api("/api/nothing");
    expect(res.status).toBe(404);
    expect((await res.json()).error.code).toBe("NOT_FOUND");
  });

  it("answers an unknown agent or model with AGENT_NOT_FOUND", async () => {
    const hook = await gw.api("/api/hooks/nobody/ci", postJson({ entity: "1" }));
    expect(hook.status).toBe(404);
    expect((await hook.json()).error.code).toBe("AGENT_NOT_FOUND");
    const model = await gw.api(
      "/v1/chat/completions",
      postJson({ model: "gpt-nobody", messages: [{ role: "user", content: "hi" }] }),
    );
    expect(model.status).toBe(404);
    expect((await model.json()).error.code).toBe("AGENT_NOT_FOUND");
  });

  it("answers a known route under the wrong method with 405 and Allow", async () => {
    for (const [method, path, allow] of [
      ["GET", "/api/chat", "POST"],
      ["GET", "/api/sessions/admin-x/compact", "POST"],
      ["PUT", "/api/agents/main", "GET, PATCH, DELETE"],
    ] as const) {
      const res = await gw.api(path, { method });
      expect(res.status, `${method} ${path}`).toBe(405);
      expect(res.headers.get("allow")).toBe(allow);
      expect((await res.json()).error.code).toBe("METHOD_NOT_ALLOWED");
    }
  });
});
