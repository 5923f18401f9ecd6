import path from "node:path";
import { describe, expect, it } from "vitest";
import { crabtalkSlug, safeFileStem, zeroclawSanitizeKey } from "../../src/keys/index.js";
import { isSessiondError } from "../../src/model/errors.js";

describe("crabtalkSlug", () => {
  it.each([
    ["TG:user-123", "tg-user-123"],
    ["a::b", "a-b"],
    [":::", ""],
    ["--a--b--", "a-b"],
    ["Hello, World!", "hello-world"],
    // ASCII-only lowercasing, as CrabTalk's `to_ascii_lowercase`.
    ["ÄBC ДЕ", "Äbc-ДЕ"],
    ["Ü:Straße", "Ü-straße"],
    ["", ""],
  ])("%j → %j", (input, expected) => {
    expect(crabtalkSlug(input)).toBe(expected);
  });
});

describe("zeroclawSanitizeKey", () => {
  it.each([
    ["../tenant\\user/channel", "___tenant_user_channel"],
    ["user_Алиса", "user_Алиса"],
    ["telegram:123", "telegram_123"],
    ["a-b_c", "a-b_c"],
    ["a b😀c", "a_b_c"],
  ])("%j → %j", (input, expected) => {
    expect(zeroclawSanitizeKey(input)).toBe(expected);
  });

  it("is idempotent", () => {
    for (const input of ["../tenant\\user/channel", "user_Алиса", "x:y/z", "😀😀"]) {
      const once = zeroclawSanitizeKey(input);
      expect(zeroclawSanitizeKey(once)).toBe(once);
    }
  });

  it("is lossy: the reason safeFileStem exists", () => {
    expect(zeroclawSanitizeKey("a:b")).toBe(zeroclawSanitizeKey("a/b"));
  });
});

describe("safeFileStem", () => {
  const adversarial = [
    "..",
    ".",
    "...",
    ".hidden",
    "../../etc/passwd",
    "a/b",
    "a\\b",
    "a:b",
    "a_b",
    "a-b",
    "a b",
    "CON",
    "nul",
    "Telegram:1",
    "telegram:1",
    "TELEGRAM:1",
    "user_Алиса",
    "user_Боб",
    "😀",
    "😁",
    "x".repeat(512),
    `${"x".repeat(511)}y`,
    "é".repeat(256),
    "app_api:bob%2Fx",
    "app_api:bob/x",
  ];

  it("uses only [a-z0-9._-], never starts with a dot, and stays within 200 bytes", () => {
    for (const key of adversarial) {
      const stem = safeFileStem(key);
      expect(stem).toMatch(/^[a-z0-9._-]+$/);
      expect(stem.startsWith(".")).toBe(false);
      expect(Buffer.byteLength(stem)).toBeLessThanOrEqual(200);
    }
  });

  it("gives every key its own name, including keys that differ only in case or in dropped characters", () => {
    const stems = adversarial.map(safeFileStem);
    expect(new Set(stems).size).toBe(adversarial.length);
  });

  it("cannot leave its directory", () => {
    const dir = path.resolve("/var/lib/sessiond/sessions");
    for (const key of adversarial) {
      const file = path.resolve(dir, `${safeFileStem(key)}.jsonl`);
      expect(path.dirname(file)).toBe(dir);
    }
  });

  it("is deterministic and keeps a readable prefix", () => {
    expect(safeFileStem("telegram:123456789")).toBe(safeFileStem("telegram:123456789"));
    expect(safeFileStem("telegram:123456789")).toMatch(/^telegram-123456789-[0-9a-f]{32}$/);
    expect(safeFileStem(":::")).toMatch(/^[0-9a-f]{32}$/);
  });

  it("rejects what is not a valid key", () => {
    for (const bad of ["", "a\u0000b", "x".repeat(513)]) {
      try {
        safeFileStem(bad);
        expect.unreachable();
      } catch (error) {
        expect(isSessiondError(error, "INVALID_KEY")).toBe(true);
      }
    }
  });
});

describe("file names never carry a secret", () => {
  const secret = `ghp_${"Q7vLm2Xz9RkT4wYb8NcJ".repeat(2)}`;

  it("slugs a secret as `redacted`", () => {
    expect(crabtalkSlug(`deploy with ${secret}`)).toBe("deploy-with-redacted");
  });

  it("leaves a secret in a key out of its stem", () => {
    const stem = safeFileStem(`app_api:bob/${secret}`);
    expect(stem.startsWith("app-api-bob-redacted-")).toBe(true);
    expect(stem).not.toContain(secret.slice(4, 16).toLowerCase());
  });
});
