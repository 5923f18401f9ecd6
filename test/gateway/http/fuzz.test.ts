import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { random } from "../../../bench/support.js";
import { BODY_ROUTES, startTestGateway, type TestGateway } from "./helpers.js";

const FIELDS = [
  "message",
  "peer",
  "session_id",
  "channel",
  "subject_ref",
  "messages",
  "model",
  "stream",
  "entity",
  "sender",
  "runtime",
  "cwd",
  "instructions",
  "name",
  "object_attributes",
  "at_seq",
  "to_key",
  "to_seq",
  "expect_head",
  "__proto__",
  "constructor",
];
const STRINGS = [
  "",
  "x",
  "admin-x",
  "/new",
  "/reset hi",
  "..%2F",
  "\u0000",
  "\ud800",
  "𝕏",
  "a".repeat(600),
  "sk-abcdefghijklmnopqrstuvwxyz012345",
  "user",
  "assistant",
  "main",
  "http://127.0.0.1:1",
];

function value(next: () => number, depth: number): unknown {
  const r = next();
  if (depth > 4 || r < 0.3) return STRINGS[Math.floor(next() * STRINGS.length)];
  if (r < 0.4) return Math.floor(next() * 2 ** 40) * (next() < 0.5 ? -1 : 1);
  if (r < 0.45) return next() < 0.5;
  if (r < 0.5) return null;
  if (r < 0.7) return Array.from({ length: Math.floor(next() * 4) }, () => value(next, depth + 1));
  return object(next, depth + 1);
}

function object(next: () => number, depth: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (let i = Math.floor(next() * 5); i > 0; i--) {
    out[FIELDS[Math.floor(next() * FIELDS.length)] ?? "x"] = value(next, depth);
  }
  if (next() < 0.5) out.messages = [{ role: "user", content: value(next, depth + 1) }];
  return out;
}

/** A body: mostly JSON objects of the right field names and wrong shapes; some broken, deep or not JSON. */
function body(next: () => number): string | Uint8Array {
  const r = next();
  const text = JSON.stringify(object(next, 0));
  if (r < 0.1) return text.slice(0, Math.floor(next() * text.length));
  if (r < 0.15) {
    const depth = 100 + Math.floor(next() * 20_000);
    const message = next() < 0.5 ? `"message":"m",` : "";
    return `{${message}"data":${"[".repeat(depth)}${next() < 0.8 ? "]".repeat(depth) : ""}}`;
  }
  if (r < 0.2) return `{"message":${'{"a":'.repeat(70)}1${"}".repeat(70)}}`;
  if (r < 0.25) return Uint8Array.from({ length: Math.floor(next() * 64) }, () => Math.floor(next() * 256));
  if (r < 0.3) return JSON.stringify(value(next, 0));
  return text;
}

describe("HTTP body fuzz (seeded, bounded)", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway();
    // The fork and rewind routes' key has a session: their bodies reach the engine.
    await gw.engine.append(
      "fuzz:branching",
      Array.from({ length: 50 }, (_, i) => ({
        type: "message" as const,
        role: "user" as const,
        content: `m${i}`,
      })),
    );
  });
  afterAll(() => gw.stop());

  it("answers 600 random bodies on every body route without a 5xx or a crash", async () => {
    const next = random(14);
    const failures: string[] = [];
    for (let i = 0; i < 600; i++) {
      const [method, path] = BODY_ROUTES[i % BODY_ROUTES.length]!;
      const payload = body(next);
      const contentType = next() < 0.9 ? "application/json" : "text/plain";
      const res = await gw.api(path, { method, headers: { "content-type": contentType }, body: payload });
      await res.arrayBuffer();
      if (res.status >= 500)
        failures.push(`#${i} ${method} ${path} -> ${res.status}: ${String(payload).slice(0, 200)}`);
    }
    expect(failures).toEqual([]);
    expect((await gw.api("/health")).status).toBe(200);
  }, 120_000);
});
