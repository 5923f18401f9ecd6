import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { z } from "zod";
import { DECLARED, openApiDocument } from "../../../src/gateway/routes/openapi.js";
import { json, startTestGateway, type TestGateway } from "./helpers.js";

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

describe("the OpenAPI document", () => {
  it("shows each declared route with exactly the parameters and body fields its zod schemas check", () => {
    const document = openApiDocument();
    const routes = DECLARED.flatMap((operations) => Object.values(operations) as Declared[]);
    expect(routes.length).toBeGreaterThanOrEqual(16);
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

  it("tells a parameter's limits from its schema, and which body fields are required", () => {
    const document = openApiDocument();
    const limit = document.paths["/api/sessions"]?.get?.parameters?.find((p) => p.name === "limit");
    expect(limit?.schema).toMatchObject({ type: "integer", minimum: 1, maximum: 1000 });
    const start = document.paths["/api/sessions/{key}/work-session"]?.post?.requestBody;
    expect(start?.content["application/json"]?.schema.required).toEqual(["agent"]);
    const patch =
      document.paths["/api/agents/{name}"]?.patch?.requestBody?.content["application/json"]?.schema;
    expect(Object.keys(patch?.properties ?? {})).toContain("selfCompactWindow");
  });

  it("is what /api/openapi.json serves", async () => {
    const served = await (await gw.api("/api/openapi.json")).json();
    expect(served).toEqual(JSON.parse(JSON.stringify(openApiDocument())));
  });
});

describe("a request the schemas refuse", () => {
  it("is the usual 400 INVALID_ARGUMENT body, with the message the hand checks gave", async () => {
    const cases: Array<[string, RequestInit | undefined, string]> = [
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

  it("lets a valid request through with its values parsed", async () => {
    const res = await gw.api("/api/sessions?limit=5&sort=created&active=10");
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({ sessions: [] });
  });
});
