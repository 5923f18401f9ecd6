import { describe, expect, it } from "vitest";
import { parseEntryInput } from "../../src/model/entry-schema.js";
import { SessiondError } from "../../src/model/errors.js";

const invalid = (input: unknown) => {
  try {
    parseEntryInput(input);
  } catch (error) {
    return error instanceof SessiondError ? `${error.code}: ${error.message}` : String(error);
  }
  return "accepted";
};

describe("checking an entry to append", () => {
  it("gives a plain message back as a fresh object with the same fields", () => {
    for (const role of ["user", "assistant", "system", "tool"] as const) {
      const input = { type: "message", role, content: `from ${role}` };
      const parsed = parseEntryInput(input);
      expect(parsed).toEqual(input);
      expect(parsed).not.toBe(input);
    }
  });

  it("checks every field of a message that has more than a type, a role and a content", () => {
    expect(
      parseEntryInput({ type: "message", role: "user", content: "hi", ts: 5, idempotencyKey: "k" }),
    ).toEqual({
      type: "message",
      role: "user",
      content: "hi",
      ts: 5,
      idempotencyKey: "k",
    });
    expect(parseEntryInput({ type: "message", role: "user", content: "hi", unknown: 1 })).toEqual({
      type: "message",
      role: "user",
      content: "hi",
    });
    expect(invalid({ type: "message", role: "user", content: "hi", idempotencyKey: "" })).toMatch(
      /^INVALID_ENTRY: invalid entry: idempotencyKey/,
    );
    expect(invalid({ type: "message", role: "user", content: "hi", ts: -1 })).toMatch(/^INVALID_ENTRY: .*ts/);
  });

  it("refuses a message with a role or a content of the wrong kind, whatever its shape", () => {
    expect(invalid({ type: "message", role: "admin", content: "hi" })).toMatch(
      /^INVALID_ENTRY: invalid entry: role/,
    );
    expect(invalid({ type: "message", role: "user", content: 42 })).toMatch(
      /^INVALID_ENTRY: invalid entry: content/,
    );
    expect(invalid({ type: "message", role: "user" })).toMatch(/^INVALID_ENTRY: invalid entry: content/);
    expect(invalid(null)).toMatch(/^INVALID_ENTRY/);
    expect(invalid("message")).toMatch(/^INVALID_ENTRY/);
  });

  it("reads a message made by a class or inheriting its fields as the schema does", () => {
    class Message {
      type = "message";
      role = "user";
      content = "from a class";
    }
    expect(parseEntryInput(new Message())).toEqual({
      type: "message",
      role: "user",
      content: "from a class",
    });
    const inherited = Object.create({ type: "message", role: "user", content: "inherited" }) as object;
    expect(parseEntryInput(inherited)).toEqual({ type: "message", role: "user", content: "inherited" });
  });
});

describe("the fast path for the messages a turn stores", () => {
  /** The same fields on a class instance: never the fast path, always the schema. */
  class ViaSchema {
    constructor(fields: object) {
      Object.assign(this, fields);
    }
  }
  const outcome = (input: object) => {
    try {
      return { parsed: parseEntryInput(input) };
    } catch (error) {
      return { error: error instanceof SessiondError ? error.message : String(error) };
    }
  };
  const base = { type: "message", role: "assistant", content: "hello" };
  const variants: Record<string, unknown>[] = [
    { sender: { id: "main" }, replyTo: "01J", idempotencyKey: "turn:01J:reply", ts: 1_700_000_000_000 },
    { sender: { id: "alice", name: "Alice" }, ts: 0 },
    { sender: { id: "" } },
    { sender: { id: "a", name: 3 } },
    { sender: { id: "a", extra: true } },
    { sender: "alice" },
    { sender: null },
    { replyTo: 5 },
    { replyTo: "" },
    { idempotencyKey: "" },
    { idempotencyKey: "k".repeat(512) },
    { idempotencyKey: "k".repeat(513) },
    { ts: -1 },
    { ts: 1.5 },
    { ts: Number.MAX_SAFE_INTEGER + 1 },
    { ts: Number.NaN },
    { ts: "5" },
    { ts: undefined },
    { parts: [{ kind: "image", url: "https://x" }] },
    { autoInjected: false },
    { unknown: 1, ts: 5 },
  ];

  it("gives what the schema gives, and refuses what it refuses, with the same message", () => {
    for (const variant of variants) {
      const input = { ...base, ...variant };
      expect(outcome(input), JSON.stringify(variant)).toEqual(outcome(new ViaSchema(input)));
    }
  });

  it("copies the sender instead of sharing it", () => {
    const sender = { id: "alice" };
    const parsed = parseEntryInput({ ...base, sender });
    expect(parsed.type === "message" && parsed.sender).toEqual(sender);
    expect(parsed.type === "message" && parsed.sender).not.toBe(sender);
  });
});
