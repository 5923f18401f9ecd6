import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Engine } from "../../../src/engine.js";
import type { Session } from "../../../src/model/session.js";
import { postJson, startTestGateway, type TestGateway } from "./helpers.js";

/*
 * What the fork, rewind and branches routes accept and how they answer, on a real socket: every bad body is
 * a 400 that says what is wrong before the engine is asked anything, and the engine's results are sent in
 * the documented shape. The results here come from the engine's methods replaced on this one instance (so
 * the shape is checked field by field); test/gateway/http/branches.test.ts runs them for real.
 */

const KEY = "telegram:42";
let gw: TestGateway;
let parent: Session;
const calls: Array<[method: string, key: string, options: unknown]> = [];

beforeAll(async () => {
  gw = await startTestGateway();
  await gw.engine.append(KEY, [
    { type: "message", role: "user", content: "one" },
    { type: "message", role: "assistant", content: "two" },
  ]);
  parent = (await gw.engine.sessions.get(KEY)) as Session;
  const engine = gw.engine as { -readonly [K in keyof Engine]: Engine[K] };
  const origin = { key: KEY, sessionId: parent.id, seq: 1 };
  const child = (key: string): Session => ({
    ...parent,
    id: "01CHILD",
    key,
    entryCount: 1,
    forkedFrom: origin,
  });
  engine.fork = async (key, options = {}) => {
    calls.push(["fork", key, options]);
    return {
      session: child(options.toKey ?? `${key}/fork-01CHILD`),
      forkedFrom: origin,
      runtimeSessions: { followed: ["main"], cleared: [] },
    };
  };
  engine.rewind = async (key, options) => {
    calls.push(["rewind", key, options]);
    return {
      current: child(key),
      archived: { ...parent, state: "archived" },
      forkedFrom: origin,
      runtimeSessions: { followed: [], cleared: ["cx"] },
    };
  };
  engine.branches = async (key) => {
    calls.push(["branches", key, undefined]);
    return [
      { key, session: parent, kind: "current" },
      { key: `${key}/fork-01CHILD`, session: child(`${key}/fork-01CHILD`), kind: "fork" },
    ];
  };
});
afterAll(async () => {
  await gw.stop();
});

const path = (op: string, key = KEY) => `/api/sessions/${encodeURIComponent(key)}/${op}`;

async function refused(op: string, body: string, code = "INVALID_ARGUMENT"): Promise<string> {
  const before = calls.length;
  const res = await gw.api(path(op), {
    method: "POST",
    headers: { "content-type": "application/json" },
    body,
  });
  const answer = (await res.json()) as { error: { code: string; message: string } };
  expect([body, res.status, answer.error.code]).toEqual([body, 400, code]);
  expect(calls.length).toBe(before);
  return answer.error.message;
}

describe("POST /api/sessions/{key}/fork", () => {
  it("refuses a field it does not take, naming it and the ones it takes", async () => {
    expect(await refused("fork", JSON.stringify({ at: 1 }))).toBe(
      'unknown field "at" (fork takes at_seq, to_key)',
    );
  });

  it("refuses an at_seq that is not a positive integer, and an empty or invalid to_key", async () => {
    for (const at_seq of ["1", 0, -1, 1.5, true, 2 ** 60]) {
      expect(await refused("fork", JSON.stringify({ at_seq }))).toBe(
        "at_seq must be an integer of at least 1",
      );
    }
    expect(await refused("fork", JSON.stringify({ to_key: "" }))).toBe("to_key must be a non-empty string");
    expect(await refused("fork", JSON.stringify({ to_key: 5 }))).toBe("to_key must be a non-empty string");
    expect(await refused("fork", JSON.stringify({ to_key: "a\u0001b" }), "INVALID_KEY")).toContain(
      "control character",
    );
  });

  it("refuses a body that is not a JSON object", async () => {
    await refused("fork", "[1]", "INVALID_JSON");
    await refused("fork", "{at_seq: 1", "INVALID_JSON");
  });

  it("forks at the newest entry with no body, or with {} or nulls", async () => {
    for (const init of [
      { method: "POST" },
      postJson({}),
      postJson({ at_seq: null, to_key: null }),
    ] as RequestInit[]) {
      calls.length = 0;
      const res = await gw.api(path("fork"), init);
      expect(res.status).toBe(201);
      expect(calls).toEqual([["fork", KEY, {}]]);
    }
  });

  it("passes at_seq and to_key on and answers 201 {key, session, forked_from: {key, session_id, seq}}", async () => {
    calls.length = 0;
    const res = await gw.api(path("fork"), postJson({ at_seq: 1, to_key: "telegram:42/try" }));
    expect(res.status).toBe(201);
    expect(calls).toEqual([["fork", KEY, { atSeq: 1, toKey: "telegram:42/try" }]]);
    const body = (await res.json()) as unknown as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(["forked_from", "key", "runtime_sessions", "session"]);
    expect(body.runtime_sessions).toEqual({ followed: ["main"], cleared: [] });
    expect(body.key).toBe("telegram:42/try");
    expect(body.forked_from).toEqual({ key: KEY, session_id: parent.id, seq: 1 });
    // The session as every route sends one, its lineage included.
    expect(body.session).toMatchObject({
      key: "telegram:42/try",
      forkedFrom: { key: KEY, sessionId: parent.id, seq: 1 },
    });
  });

  it("answers 404 SESSION_NOT_FOUND for a key with no session, without asking the engine to fork", async () => {
    calls.length = 0;
    const res = await gw.api(path("fork", "telegram:nobody"), postJson({}));
    expect(res.status).toBe(404);
    expect((await res.json()).error.code).toBe("SESSION_NOT_FOUND");
    expect(calls).toEqual([]);
  });
});

describe("POST /api/sessions/{key}/rewind", () => {
  it("requires to_seq, a positive integer, and takes nothing but it and expect_head", async () => {
    expect(await refused("rewind", "{}")).toBe("to_seq is required");
    expect(await refused("rewind", JSON.stringify({ to_seq: null }))).toBe("to_seq is required");
    for (const to_seq of ["2", 0, 2.5, false]) {
      expect(await refused("rewind", JSON.stringify({ to_seq }))).toBe(
        "to_seq must be an integer of at least 1",
      );
    }
    expect(await refused("rewind", JSON.stringify({ to_seq: 2, expect_head: -1 }))).toBe(
      "expect_head must be an integer of at least 0",
    );
    expect(await refused("rewind", JSON.stringify({ to_seq: 2, expect_head: "2" }))).toBe(
      "expect_head must be an integer of at least 0",
    );
    expect(await refused("rewind", JSON.stringify({ to_seq: 2, expectHead: 2 }))).toBe(
      'unknown field "expectHead" (rewind takes to_seq, expect_head)',
    );
    await refused("rewind", "", "INVALID_JSON");
  });

  it("passes to_seq and expect_head on and answers {session, archived, forked_from}", async () => {
    calls.length = 0;
    const res = await gw.api(path("rewind"), postJson({ to_seq: 2, expect_head: 2 }));
    expect(res.status).toBe(200);
    expect(calls).toEqual([["rewind", KEY, { toSeq: 2, expectHead: 2 }]]);
    const body = (await res.json()) as unknown as Record<string, { key?: string; state?: string }>;
    expect(Object.keys(body).sort()).toEqual(["archived", "forked_from", "runtime_sessions", "session"]);
    expect(body.runtime_sessions).toEqual({ followed: [], cleared: ["cx"] });
    expect(body.session).toMatchObject({ key: KEY, id: "01CHILD" });
    expect(body.archived).toMatchObject({ id: parent.id, state: "archived" });
    expect(body.forked_from).toEqual({ key: KEY, session_id: parent.id, seq: 1 });
  });

  it("answers 404 for a key with no session", async () => {
    const res = await gw.api(path("rewind", "telegram:nobody"), postJson({ to_seq: 1 }));
    expect(res.status).toBe(404);
    expect((await res.json()).error.code).toBe("SESSION_NOT_FOUND");
  });
});

describe("GET /api/sessions/{key}/branches", () => {
  it("answers {key, branches: [{kind, key, session}]}", async () => {
    const res = await gw.api(path("branches"));
    expect(res.status).toBe(200);
    const body = (await res.json()) as unknown as {
      key: string;
      branches: Array<{ kind: string; key: string; session: { id: string } }>;
    };
    expect(body.key).toBe(KEY);
    expect(body.branches.map((b) => [b.kind, b.key, b.session.id])).toEqual([
      ["current", KEY, parent.id],
      ["fork", `${KEY}/fork-01CHILD`, "01CHILD"],
    ]);
  });

  it("answers 404 for a key with no session, and 405 for another method", async () => {
    const missing = await gw.api(path("branches", "telegram:nobody"));
    expect(missing.status).toBe(404);
    const wrong = await gw.api(path("branches"), { method: "POST" });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get("allow")).toBe("GET");
  });
});
