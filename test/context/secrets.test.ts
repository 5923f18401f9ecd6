import { describe, expect, it } from "vitest";
import { isCredentialKey, redactSecrets } from "../../src/context/index.js";
import { leakedPiece } from "./leaks.js";

describe("redactSecrets", () => {
  it.each([
    [
      "an OpenAI key",
      "sk-proj-Q7vLm2Xz9RkT4wYb8NcJ",
      "key sk-proj-Q7vLm2Xz9RkT4wYb8NcJ in text",
      "key [redacted] in text",
    ],
    ["a bearer token", "Zk4mQ9rT2vX7wL1p", "send Bearer Zk4mQ9rT2vX7wL1p now", "send Bearer [redacted] now"],
    [
      "a GitHub token",
      "ghp_R2d9KqL7xV4mN8bT1zW6yH3cJ5fG0aS9eU2i",
      "ghp_R2d9KqL7xV4mN8bT1zW6yH3cJ5fG0aS9eU2i",
      "[redacted]",
    ],
    ["a Slack bot token", "xoxb-8812-QmZr7TnW4kLp", "use xoxb-8812-QmZr7TnW4kLp.", "use [redacted]."],
    ["a Slack user token", "xoxp-9921-PvXa3LcE8mRt", "xoxp-9921-PvXa3LcE8mRt", "[redacted]"],
    ["an AWS key id", "AKIAQ7VLM2XZ9RKT4WYB", "id=AKIAQ7VLM2XZ9RKT4WYB;", "id=[redacted];"],
    [
      "a password pair",
      "Hq8zVt3Lw",
      "login?user=bob&password=Hq8zVt3Lw&next=/",
      "login?user=bob&password=[redacted]&next=/",
    ],
    [
      "a quoted JSON secret",
      'Mz7"Qp2Rk',
      '{"password": "Mz7\\"Qp2Rk", "user": "bob"}',
      '{"password": "[redacted]", "user": "bob"}',
    ],
    ["an api_key pair", "Jd8rLq2Xv9", "api_key: Jd8rLq2Xv9", "api_key: [redacted]"],
    [
      "a basic auth header",
      "dXNlcjpQdzhYcTI=",
      "Authorization: Basic dXNlcjpQdzhYcTI=",
      "Authorization: [redacted]",
    ],
    [
      "a URL password",
      "Wq9zXr4T",
      "postgres://bob:Wq9zXr4T@db:5432/app",
      "postgres://bob:[redacted]@db:5432/app",
    ],
    ["a cookie header", "Sx8rQ1vLk9", "Cookie: sid=Sx8rQ1vLk9; theme=dark", "Cookie: [redacted]"],
  ])("replaces %s whole", (_what, secret, text, expected) => {
    const out = redactSecrets(text);
    expect(out).toBe(expected);
    expect(leakedPiece(out, secret)).toBeUndefined();
  });

  it("removes a whole PEM private key block, and a cut one up to the end", () => {
    const body = "MIIEpAIBAAKCAQEAx9QzLmR7vT2w\nKp8NcJ4yHb6";
    const block = `-----BEGIN RSA PRIVATE KEY-----\n${body}\n-----END RSA PRIVATE KEY-----`;
    expect(redactSecrets(`before\n${block}\nafter`)).toBe("before\n[redacted]\nafter");
    const cut = redactSecrets(`before -----BEGIN OPENSSH PRIVATE KEY-----\n${body.slice(0, 20)}`);
    expect(cut).toBe("before [redacted]");
    expect(leakedPiece(cut, body)).toBeUndefined();
  });

  it("removes a quoted value that was cut before its closing quote", () => {
    const out = redactSecrets('{"user": "bob", "db_password": "Rk8sLq3Vz7Np');
    expect(out).toBe('{"user": "bob", "db_password": "[redacted]"');
  });

  it("stays linear on text full of word boundaries", () => {
    const time = (text: string): number => {
      redactSecrets(text);
      const start = performance.now();
      for (let i = 0; i < 3; i += 1) redactSecrets(text);
      return performance.now() - start;
    };
    const plain = time("lorem ipsum dolor sit amet ".repeat(8000));
    // Before the fix these took thousands of times longer than plain text of the same size.
    for (const tricky of ["a-".repeat(100_000), "a.".repeat(100_000), "://a:".repeat(40_000)]) {
      expect(time(tricky)).toBeLessThan(plain * 50 + 50);
    }
  });

  it("leaves ordinary text alone", () => {
    const text = "max_tokens=100, token_count: 5; Bearer tokens are fine; the sky is blue";
    expect(redactSecrets(text)).toBe(text);
  });

  it("is idempotent", () => {
    const once = redactSecrets("password=abc123xyz and sk-proj-Q7vLm2Xz9RkT4wYb8NcJ");
    expect(redactSecrets(once)).toBe(once);
  });
});

describe("isCredentialKey", () => {
  it.each([
    "password",
    "PASSWORD",
    "db_password",
    "passwd",
    "secret",
    "client_secret",
    "clientSecret",
    "api_key",
    "apiKey",
    "api-key",
    "X-API-Key",
    "Authorization",
    "proxy-authorization",
    "cookie",
    "Set-Cookie",
    "token",
    "access_token",
    "refreshToken",
    "idToken",
    "private_key",
    "privateKey",
    "aws_secret_access_key",
  ])("drops %s", (key) => {
    expect(isCredentialKey(key)).toBe(true);
  });

  it.each(["max_tokens", "tokens", "tokenizer", "user", "timezone", "query", "author"])("keeps %s", (key) => {
    expect(isCredentialKey(key)).toBe(false);
  });
});
