import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { z } from "zod";
import { createGatewayApp } from "../../../src/gateway/app.js";
import { DECLARED, openApiDocument } from "../../../src/gateway/routes/openapi.js";
import { json, memoryLogger, startTestGateway, type TestGateway, TOKEN } from "./helpers.js";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway({
    agents: ["dev"],
    defaultAgent: "dev",
    agentOptions: { dev: { runtime: "echo" } },
  });
});
afterAll(async () => {
  await gw.stop();
});

type Shape = Record<string, z.ZodType>;
interface Declared {
  method: string;
  path: string;
  request?: {
    params?: { shape: Shape };
    query?: { shape: Shape };
    body?: { content: { "application/json": { schema: { shape: Shape } } } };
  };
}

const names = (schema: { shape: Shape } | undefined) => Object.keys(schema?.shape ?? {}).sort();
const declaredRoutes = () => DECLARED.flatMap((operations) => Object.values(operations) as Declared[]);

/** `METHOD /path/{param}` of every route the gateway's Hono app serves (middleware left out). */
function servedRoutes(): string[] {
  const { app, metrics } = createGatewayApp(
    { engine: gw.engine, token: TOKEN, logger: memoryLogger([]) },
    { webDir: false },
  );
  metrics.stop();
  const served = app.routes
    .filter((r) => r.method !== "ALL" && r.path !== "*" && !r.path.endsWith("/*"))
    .map((r) => `${r.method} ${r.path.replaceAll(/:(\w+)/g, "{$1}")}`);
  return [...new Set(served)].sort();
}

describe("the OpenAPI document", () => {
  it("shows each declared route with exactly the parameters and body fields its zod schemas check", () => {
    const document = openApiDocument();
    const routes = declaredRoutes();
    expect(routes.length).toBeGreaterThanOrEqual(28);
    for (const route of routes) {
      const operation = document.paths[route.path]?.[route.method];
      expect(operation, `${route.method} ${route.path}`).toBeDefined();
      const parameters = operation?.parameters ?? [];
      const inDoc = (where: string) =>
        parameters
          .filter((p) => p.in === where)
          .map((p) => p.name)
          .sort();
      expect(inDoc("path"), route.path).toEqual(names(route.request?.params));
      expect(inDoc("query"), route.path).toEqual(names(route.request?.query));
      const body = route.request?.body?.content["application/json"].schema;
      const docBody = operation?.requestBody?.content["application/json"]?.schema;
      expect(Object.keys(docBody?.properties ?? {}).sort(), route.path).toEqual(names(body));
    }
  });

  it("has every route the gateway serves, each generated from its zod declaration (nothing written by hand)", () => {
    const document = openApiDocument();
    const inDocument = Object.entries(document.paths)
      .flatMap(([path, operations]) => Object.keys(operations).map((m) => `${m.toUpperCase()} ${path}`))
      .sort();
    const declared = declaredRoutes()
      .map((r) => `${r.method.toUpperCase()} ${r.path}`)
      .sort();
    // The channel webhooks (`/channels/…`, mounted by `sessiond serve` when a channel is configured) speak
    // each platform's protocol and are not part of this app.
    expect(servedRoutes()).toEqual(declared);
    expect(inDocument).toEqual(declared);
  });

  it("tells a parameter's limits from its schema, and which body fields are required", () => {
    const document = openApiDocument();
    const limit = document.paths["/api/sessions"]?.get?.parameters?.find((p) => p.name === "limit");
    expect(limit?.schema).toMatchObject({ type: "integer", minimum: 1, maximum: 1000 });
    const start = document.paths["/api/sessions/{key}/work-session"]?.post?.requestBody;
    expect(start?.content["application/json"]?.schema.required).toEqual(["agent"]);
    const patch =
      document.paths["/api/agents/{name}"]?.patch?.requestBody?.content["application/json"]?.schema;
    expect(Object.keys(patch?.properties ?? {})).toContain("selfCompactWindow");
    const webhook = document.paths["/api/webhook"]?.post?.requestBody?.content["application/json"]?.schema;
    expect(webhook?.required).toEqual(["peer", "message"]);
    const completion =
      document.paths["/v1/chat/completions"]?.post?.requestBody?.content["application/json"]?.schema;
    expect(completion?.required).toEqual(["messages"]);
    const hours = document.paths["/api/stats/overview"]?.get?.parameters?.find((p) => p.name === "hours");
    expect(hours?.schema).toMatchObject({ type: "integer", minimum: 1, maximum: 168 });
  });

  it("is what /api/openapi.json serves", async () => {
    const served = await (await gw.api("/api/openapi.json")).json();
    expect(served).toEqual(JSON.parse(JSON.stringify(openApiDocument())));
  });
});

describe("a request the schemas refuse", () => {
  it("is the usual 400 INVALID_ARGUMENT body, with the message the hand checks gave", async () => {
    const post = (body: unknown): RequestInit => ({
      method: "POST",
      body: JSON.stringify(body),
      headers: { "content-type": "application/json" },
    });
    const hi = [{ role: "user", content: "hi" }];
    const cases: Array<[string, RequestInit | undefined, string]> = [
      ["/api/chat", post({}), "message is required"],
      ["/api/chat", post({ message: "hi", session_id: 5 }), "session_id must be a non-empty string"],
      ["/api/webhook", post({ message: "hi" }), "peer is required"],
      ["/api/webhook", post({ peer: "p", message: "hi", channel: "" }), "channel must be a non-empty string"],
      ["/api/app/bob", post({ message: "" }), "message must be a non-empty string"],
      ["/api/app/bob/s1", post({ message: null }), "message is required"],
      ["/v1/chat/completions", post({ messages: [] }), "messages must be a non-empty array"],
      ["/v1/chat/completions", post({ messages: "hi" }), "messages must be a non-empty array"],
      ["/v1/chat/completions", post({ messages: [5] }), "every message must be an object"],
      [
        "/v1/chat/completions",
        post({ messages: [{ role: "user", content: 5 }] }),
        "message content must be a string or an array of parts",
      ],
      ["/v1/chat/completions", post({ messages: hi, user: 5 }), "user must be a string"],
      ["/v1/chat/completions", post({ messages: hi, model: 5 }), "model must be a string"],
      [
        "/v1/chat/completions",
        post({ messages: [{ role: "system", content: "x" }] }),
        "messages has no user message",
      ],
      ["/api/stats/overview?hours=0", undefined, "hours must be between 1 and 168"],
      ["/api/stats/overview?hours=a", undefined, "hours must be an integer"],
      ["/api/sessions/a%3Ab/export?format=pdf", undefined, "format must be one of json, jsonl, md"],
      ["/api/sessions?limit=0", undefined, "limit must be between 1 and 1000"],
      ["/api/sessions?limit=ten", undefined, "limit must be an integer"],
      ["/api/sessions?sort=size", undefined, "sort must be created or activity"],
      ["/api/sessions/a%3Ab/history?before=0", undefined, "before must be between 1 and 9007199254740991"],
      ["/api/inspect?limit=1001", undefined, "limit must be between 1 and 1000"],
      ["/api/search", undefined, "the search text is empty"],
      [
        "/api/agents/dev",
        {
          method: "PATCH",
          body: JSON.stringify({ url: "http://x" }),
          headers: { "content-type": "application/json" },
        },
        'unknown agent setting "url" (editable: runtime, cwd, model, instructions, permission, selfCompact, selfCompactWindow)',
      ],
      [
        "/api/agents/dev",
        {
          method: "PATCH",
          body: JSON.stringify({ cwd: 3 }),
          headers: { "content-type": "application/json" },
        },
        "cwd must be a string or null",
      ],
      [
        "/api/agents/dev/duplicate",
        { method: "POST", body: "{}", headers: { "content-type": "application/json" } },
        "name is required",
      ],
    ];
    for (const [path, init, message] of cases) {
      const res = await gw.api(path, init);
      expect(res.status, path).toBe(400);
      expect(await json(res), path).toEqual({ error: { code: "INVALID_ARGUMENT", message } });
    }
  });

  it("is checked after the body is read with the gateway's own limits: bad JSON is still INVALID_JSON", async () => {
    const res = await gw.api("/api/agents/dev", {
      method: "PATCH",
      body: "{not json",
      headers: { "content-type": "application/json" },
    });
    expect(res.status).toBe(400);
    expect((await json(res)).error?.code).toBe("INVALID_JSON");
  });

  it("refuses a stream flag that is not a boolean, which was read as false", async () => {
    const res = await gw.api("/v1/chat/completions", {
      method: "POST",
      body: JSON.stringify({ messages: [{ role: "user", content: "hi" }], stream: "yes" }),
      headers: { "content-type": "application/json" },
    });
    expect(res.status).toBe(400);
    expect(await json(res)).toEqual({
      error: { code: "INVALID_ARGUMENT", message: "stream must be true or false" },
    });
  });

  it("lets a valid request through with its values parsed", async () => {
    const res = await gw.api("/api/sessions?limit=5&sort=created&active=10");
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({ sessions: [] });
  });

  it("lets valid turns through with their fields read", async () => {
    const chat = await json(
      await gw.api("/api/chat", {
        method: "POST",
        body: JSON.stringify({ message: "hello", session_id: "admin-x", sender: null }),
        headers: { "content-type": "application/json" },
      }),
    );
    expect(chat.session_id).toBe("admin-x");
    const hook = await gw.api("/api/hooks/dev/gitlab?async=1", {
      method: "POST",
      body: JSON.stringify({ object_attributes: { iid: 7 } }),
      headers: { "content-type": "application/json" },
    });
    expect(hook.status).toBe(202);
    expect((await json(hook)).key).toContain("gitlab:7");
    const completion = await gw.api("/v1/chat/completions", {
      method: "POST",
      body: JSON.stringify({
        messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
        model: null,
      }),
      headers: { "content-type": "application/json" },
    });
    expect(completion.status).toBe(200);
  });
});
