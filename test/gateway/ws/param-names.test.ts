import { describe, expect, it } from "vitest";
import { openApiDocument } from "../../../src/gateway/routes/openapi.js";
import { METHOD_NAMES, methodDocs } from "../../../src/gateway/ws/handlers/index.js";

/** Each WebSocket method and the REST operation that means the same; null: REST has no such operation. */
const REST_TWIN: Record<string, readonly [path: string, method: string] | null> = {
  "sessions.list": ["/api/sessions", "get"],
  "sessions.compact": ["/api/sessions/{key}/compact", "post"],
  "conversations.history": ["/api/sessions/{key}/history", "get"],
  "chat.send": ["/api/chat", "post"],
  "sessions.search": ["/api/search", "get"],
  "sessions.fork": ["/api/sessions/{key}/fork", "post"],
  "sessions.rewind": ["/api/sessions/{key}/rewind", "post"],
  "sessions.branches": ["/api/sessions/{key}/branches", "get"],
  "sessions.kill": null,
  "sessions.subscribe": null,
  "sessions.unsubscribe": null,
  "conversations.list": null,
  "sessions.watch": null,
  "sessions.unwatch": null,
  "turns.get": ["/api/turns/{id}", "get"],
};

/**
 * The one name that differs by design: a WebSocket method names the key `session` (as the connection's
 * `?session=` does), REST puts it in the path (`{key}`) or, for `/api/chat`, GoClaw's `session_id`.
 */
const KEY_NAMES = ["key", "session_id"];

function restNames(path: string, method: string): string[] {
  const operation = openApiDocument().paths[path]?.[method];
  if (!operation) throw new Error(`no ${method} ${path} in the OpenAPI document`);
  return [
    ...(operation.parameters ?? []).map((p) => p.name),
    ...Object.keys(operation.requestBody?.content["application/json"]?.schema.properties ?? {}),
  ];
}

describe("WebSocket parameter names", () => {
  it("name every method's REST twin (or say it has none)", () => {
    expect(Object.keys(REST_TWIN).sort()).toEqual([...METHOD_NAMES].sort());
  });

  it("are the names its REST twin declares for the same thing", () => {
    const docs = methodDocs();
    const mismatches: string[] = [];
    for (const [method, twin] of Object.entries(REST_TWIN)) {
      if (!twin) continue;
      const rest = restNames(...twin);
      for (const name of Object.keys(docs[method]?.params ?? {})) {
        const same = name === "session" ? KEY_NAMES.some((k) => rest.includes(k)) : rest.includes(name);
        if (!same) mismatches.push(`${method}.${name} (REST ${twin[1]} ${twin[0]}: ${rest.join(", ")})`);
      }
    }
    expect(mismatches).toEqual([]);
  });
});
