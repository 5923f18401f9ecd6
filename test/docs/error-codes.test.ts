import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { statusOf } from "../../src/gateway/errors.js";
import type { ErrorCode } from "../../src/model/errors.js";
import { type ServedGateway, serveGateway } from "../support/serve-child.js";

// The documentation is the promise: its list of error codes (docs/library.md) and of HTTP statuses
// (docs/gateway.md), walked against the code and against what a real gateway answers.
const LIBRARY = readFileSync("docs/library.md", "utf8");
const GATEWAY = readFileSync("docs/gateway.md", "utf8");

/** The codes of the `ErrorCode` union, read from its source. */
function errorCodes(): Set<string> {
  const source = readFileSync("src/model/errors.ts", "utf8");
  const union = /export type ErrorCode =([^;]+);/.exec(source)?.[1] ?? "";
  return new Set([...union.matchAll(/"([A-Z_]+)"/g)].map((m) => m[1] as string));
}

/** The library's list: the "Errors" section's paragraph. */
function readmeLibraryCodes(): Set<string> {
  const section = /\n#+ Errors\n([\s\S]*?)\n#/.exec(LIBRARY)?.[1] ?? "";
  return new Set([...section.matchAll(/`([A-Z][A-Z_]+)`/g)].map((m) => m[1] as string));
}

/**
 * The gateway's list: "`A`, `B` and `C` 409, ..." gives each code the status that follows it; a code in
 * parentheses belongs to the status just given (`INVALID_*` 400 (`INVALID_JSON` for ...)).
 */
function readmeStatuses(): Map<string, number> {
  const bullet = /\*\*Errors\*\* are always[\s\S]*?(?=\n\n|\n- \*\*)/.exec(GATEWAY)?.[0] ?? "";
  const statuses = new Map<string, number>();
  let pending: string[] = [];
  let last: number | undefined;
  let depth = 0;
  for (const token of bullet.matchAll(/\(|\)|`([A-Z][A-Z_]*\*?)`|\b([1-5]\d\d)\b/g)) {
    if (token[0] === "(") depth++;
    else if (token[0] === ")") depth = Math.max(0, depth - 1);
    else if (token[1] !== undefined) {
      if (depth > 0 && last !== undefined) statuses.set(token[1], last);
      else if (depth === 0) pending.push(token[1]);
    } else if (token[2] !== undefined && depth === 0) {
      last = Number(token[2]);
      for (const code of pending) statuses.set(code, last);
      pending = [];
    }
  }
  return statuses;
}

describe("the documented error codes (docs/library.md)", () => {
  it("lists every code the library raises, and no other", () => {
    const listed = readmeLibraryCodes();
    const codes = errorCodes();
    expect([...codes].filter((c) => !listed.has(c)).sort()).toEqual([]);
    expect([...listed].filter((c) => !codes.has(c)).sort()).toEqual([]);
  });

  it("gives each engine code the status the gateway answers with", () => {
    const statuses = readmeStatuses();
    expect(statuses.size).toBeGreaterThan(20);
    const engine = errorCodes();
    for (const [code, status] of statuses) {
      if (code === "INVALID_*") {
        for (const c of engine)
          if (c.startsWith("INVALID_")) expect({ c, s: statusOf(c as ErrorCode) }).toEqual({ c, s: status });
      } else if (engine.has(code)) {
        expect({ code, status: statusOf(code as ErrorCode) }).toEqual({ code, status });
      }
    }
    // "anything else 500": the engine codes the list does not name.
    for (const code of engine) {
      if (!statuses.has(code) && !code.startsWith("INVALID_")) {
        expect({ code, status: statusOf(code as ErrorCode) }).toEqual({ code, status: 500 });
      }
    }
  });
});

describe("the documented statuses (docs/gateway.md) against a real gateway", () => {
  const token = "readme-errors-token-0123456789";
  let dir: string;
  let served: ServedGateway;
  let url: string;
  const statuses = readmeStatuses();

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "sessiond-readme-errors-"));
    writeFileSync(join(dir, "sessiond.yaml"), "agents:\n  - id: main\n");
    served = serveGateway(dir, token, ["--body-limit", "1024"]);
    url = await served.listening();
    const chat = await call("POST", "/api/chat", { message: "hello", session_id: "admin-session" });
    expect(chat.code).toBeUndefined();
  }, 30_000);
  afterAll(() => {
    served?.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  async function call(method: string, path: string, body?: unknown, auth = true, raw?: string) {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: {
        ...(auth ? { authorization: `Bearer ${token}` } : {}),
        ...(body !== undefined || raw !== undefined ? { "content-type": "application/json" } : {}),
      },
      ...(raw !== undefined ? { body: raw } : body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const json = (await response.json().catch(() => ({}))) as { error?: { code: string; message: string } };
    return { status: response.status, code: json.error?.code, message: json.error?.message };
  }

  const cases: Array<[string, () => ReturnType<typeof call>]> = [
    ["UNAUTHORIZED", () => call("GET", "/api/sessions", undefined, false)],
    ["NOT_FOUND", () => call("GET", "/api/no-such-route")],
    ["METHOD_NOT_ALLOWED", () => call("PUT", "/api/sessions")],
    ["INVALID_JSON", () => call("POST", "/api/chat", undefined, true, "[1, 2")],
    ["INVALID_KEY", () => call("POST", "/api/chat", { message: "hi", session_id: "someone-else" })],
    ["SESSION_NOT_FOUND", () => call("GET", "/api/sessions/web%3Anobody")],
    ["AGENT_NOT_FOUND", () => call("GET", "/api/agents/nobody")],
    ["NOTHING_TO_COMPACT", () => call("POST", "/api/sessions/admin-session/compact", {})],
    // admin-session holds the chat's input and reply: its head is 2, and the key has a session.
    [
      "SESSION_CHANGED",
      () => call("POST", "/api/sessions/admin-session/rewind", { to_seq: 2, expect_head: 1 }),
    ],
    ["KEY_TAKEN", () => call("POST", "/api/sessions/admin-session/fork", { to_key: "admin-session" })],
    [
      "PAYLOAD_TOO_LARGE",
      () => call("POST", "/api/chat", { message: "x".repeat(4096), session_id: "admin-session" }),
    ],
  ];
  for (const [code, provoke] of cases) {
    it(`${code} is answered with the documented status and the one error shape`, async () => {
      const answer = await provoke();
      const promised =
        statuses.get(code) ?? (code.startsWith("INVALID_") ? statuses.get("INVALID_*") : undefined);
      expect(promised).toBeDefined();
      expect(answer.code).toBe(code);
      expect(answer.status).toBe(promised);
      expect(typeof answer.message).toBe("string");
    });
  }
});
