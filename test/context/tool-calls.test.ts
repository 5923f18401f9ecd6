import { describe, expect, it } from "vitest";
import { recordToolCalls } from "../../src/context/index.js";
import { leakedPiece } from "./leaks.js";

const argsOf = (args: unknown): Record<string, unknown> =>
  recordToolCalls([{ id: "c1", name: "tool", arguments: args }])[0]!.arguments;

describe("recordToolCalls: credentials", () => {
  const secrets = {
    password: "Pq7Rz9Lm3Wx",
    passwd: "Tn4Vb8Kc2Hs",
    secret: "Gd6Yh1Jm5Qa",
    api_key: "Lx3Np7Rt9Bv",
    apiKey: "Wc5Fk2Hs8Md",
    "api-key": "Zr1Qw4Ey7Ut",
    Authorization: "Bearer Oi9Pa3Sd6Fg",
    cookie: "sid=Hj2Kl5Zx8Cv",
    access_token: "Bn4Mq7Wr1Ty",
    refreshToken: "Ui5Op8As2Df",
    private_key: "Gh3Jk6Lz9Xc",
    client_secret: "Vb2Nm5Qw8Er",
  };

  it("leaves out credential keys at any depth, inside objects and arrays, and keeps the rest", () => {
    const args = {
      query: "weather",
      ...secrets,
      nested: { deeper: [{ user: "bob", PASSWORD: "Yt6Re3Wq0Pl" }, { auth: { API_KEY: "Kj8Hg5Fd2Sa" } }] },
    };
    const out = argsOf(args);
    expect(out.query).toBe("weather");
    expect(out.nested).toEqual({ deeper: [{ user: "bob" }, {}] });
    const text = JSON.stringify(out);
    for (const key of Object.keys(secrets)) expect(text).not.toContain(`"${key}"`);
    for (const value of [...Object.values(secrets), "Yt6Re3Wq0Pl", "Kj8Hg5Fd2Sa"]) {
      expect(leakedPiece(text, value.replace(/^(Bearer |sid=)/, ""))).toBeUndefined();
    }
  });

  it("keeps keys that merely mention tokens", () => {
    expect(argsOf({ max_tokens: 5, tokenizer: "o200k" })).toEqual({ max_tokens: 5, tokenizer: "o200k" });
  });

  it("scrubs secret shapes from ordinary values, also where the 80-char cut would split them", () => {
    const key = "sk-proj-Q7vLm2Xz9RkT4wYb8NcJ";
    const out = argsOf({
      note: `${"x".repeat(70)} ${key}`,
      list: [`header Bearer Zk4mQ9rT2vX7wL1p`, { deep: `use ${key}` }],
    });
    const text = JSON.stringify(out);
    expect(leakedPiece(text, key.slice(3))).toBeUndefined();
    expect(leakedPiece(text, "Zk4mQ9rT2vX7wL1p")).toBeUndefined();
    expect(text).not.toContain("sk-");
  });

  it("never keeps an OpenClaw-style mask (first 6 … last 4) of a secret", () => {
    const token = "ghp_R2d9KqL7xV4mN8bT1zW6yH3cJ5fG0aS9eU2i";
    const text = JSON.stringify(argsOf({ header: `token ${token}`, github_token: token }));
    expect(text).not.toContain(token.slice(0, 6));
    expect(text).not.toContain(token.slice(-4));
    expect(leakedPiece(text, token)).toBeUndefined();
  });

  it("cleans arguments given as JSON text", () => {
    expect(argsOf('{"city":"Oslo","password":"Pq7Rz9Lm3Wx"}')).toEqual({ city: "Oslo" });
  });
});

describe("recordToolCalls: limits", () => {
  it("keeps at most 64 calls, the first ones", () => {
    const calls = Array.from({ length: 100 }, (_, i) => ({ id: `c${i}`, name: "t", arguments: {} }));
    const out = recordToolCalls(calls);
    expect(out).toHaveLength(64);
    expect(out[0]!.id).toBe("c0");
    expect(out[63]!.id).toBe("c63");
  });

  it("cuts each string to 80 characters, ending in …", () => {
    const long = "abcdefghij".repeat(10);
    const out = argsOf({ a: long, b: ["short", long] });
    expect(out.a).toBe(`${long.slice(0, 79)}…`);
    expect((out.a as string).length).toBe(80);
    expect(out.b).toEqual(["short", `${long.slice(0, 79)}…`]);
  });

  it("keeps arguments that fit in 200 characters unchanged", () => {
    const args = { timezone: "UTC", n: 3, flags: [true, null], nested: { x: "y" } };
    expect(argsOf(args)).toEqual(args);
  });

  it("fits the whole arguments into 200 characters, dropping keys from the end with a count", () => {
    const args = {
      first: "a".repeat(60),
      second: "b".repeat(60),
      third: "c".repeat(60),
      fourth: "d".repeat(60),
      fifth: 5,
    };
    const out = argsOf(args);
    const text = JSON.stringify(out);
    expect(text.length).toBeLessThanOrEqual(200);
    expect(JSON.parse(text)).toEqual(out);
    const keys = Object.keys(out);
    expect(keys.at(-1)).toBe("…");
    const kept = keys.slice(0, -1);
    expect(kept).toEqual(Object.keys(args).slice(0, kept.length));
    expect(out["…"]).toBe(5 - kept.length);
    expect(out.first).toBe(args.first);
  });

  it("stays within 200 characters for wide and deep inputs", () => {
    const wide = Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`k${i}`, `v${i}`.repeat(30)]));
    const deep = { a: { b: { c: { d: ["x".repeat(80), "y".repeat(80), "z".repeat(80)] } } } };
    for (const args of [wide, deep, { list: Array.from({ length: 500 }, (_, i) => i) }]) {
      const text = JSON.stringify(argsOf(args));
      expect(text.length).toBeLessThanOrEqual(200);
      expect(typeof JSON.parse(text)).toBe("object");
    }
  });
});

describe("recordToolCalls: ids and shapes", () => {
  it("stores a failed call's id as `failed`", () => {
    const out = recordToolCalls([
      { id: "call_1", name: "fetch", arguments: {}, failed: true },
      { id: "call_2", name: "fetch", arguments: {} },
      { name: "fetch", arguments: {}, failed: true },
    ]);
    expect(out.map((call) => call.id)).toEqual(["failed", "call_2", "failed"]);
  });

  it("wraps arguments that are not an object under `input`", () => {
    expect(argsOf("not json")).toEqual({ input: "not json" });
    expect(argsOf([1, 2])).toEqual({ input: [1, 2] });
    expect(argsOf(undefined)).toEqual({});
  });

  it("survives cycles", () => {
    const args: Record<string, unknown> = { a: 1 };
    args.self = args;
    expect(argsOf(args)).toEqual({ a: 1, self: "[…]" });
  });
});
