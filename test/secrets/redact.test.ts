import { describe, expect, it } from "vitest";
import { presetScannerCount, REDACTED, redactSecrets, ungatedPresetRules } from "../../src/secrets/index.js";
import { SHAPES } from "../../src/secrets/shapes.js";
import { SECRET_CORPUS, telltales } from "../support/secret-corpus.js";

const leaks = (out: string, secret: string) => telltales(secret).filter((piece) => out.includes(piece));

/** sessiond's own shapes, without the preset. */
function ownShapes(text: string): string {
  let out = text;
  for (const { pattern, replace } of SHAPES) out = out.replace(pattern, replace);
  return out;
}

describe("redactSecrets over the corpus", () => {
  it("has at least 150 shapes", () => {
    expect(SECRET_CORPUS.length).toBeGreaterThanOrEqual(150);
    expect(new Set(SECRET_CORPUS.map((s) => s.name)).size).toBe(SECRET_CORPUS.length);
  });

  it.each(SECRET_CORPUS.map((s) => [s.name, s] as const))("removes a %s whole", (_name, sample) => {
    const out = redactSecrets(sample.text);
    expect(leaks(out, sample.secret)).toEqual([]);
    expect(out).toContain(REDACTED);
    expect(redactSecrets(out)).toBe(out);
  });

  it.each(SECRET_CORPUS.filter((s) => !s.contextual).map((s) => [s.name, s] as const))(
    "tells a %s on its own, glued to a tool name",
    (_name, sample) => {
      expect(leaks(redactSecrets(`lookup_${sample.secret}`), sample.secret)).toEqual([]);
    },
  );

  it("removes a secret glued to a tool name", () => {
    const key = SECRET_CORPUS.find((s) => s.name === "OpenAI legacy key")?.secret ?? "";
    expect(redactSecrets(`lookup_${key}`)).toBe(`lookup_${REDACTED}`);
    const npm = SECRET_CORPUS.find((s) => s.name === "npm token, bare")?.secret ?? "";
    expect(redactSecrets(`fetch-${npm}`)).toBe(`fetch-${REDACTED}`);
  });

  it("consults secretlint's recommended preset for what its own shapes miss", () => {
    expect(presetScannerCount()).toBeGreaterThanOrEqual(25);
    // Each rule is tried only on text holding one of its words; a rule a newer preset adds runs on every
    // candidate text until its words are listed.
    expect(ungatedPresetRules()).toEqual([]);
    // A Hugging Face token is letters only: no own shape takes a prefixed token without a digit.
    const hf = SECRET_CORPUS.find((s) => s.name === "Hugging Face token");
    if (!hf) throw new Error("no Hugging Face sample");
    expect(ownShapes(hf.text)).toContain(hf.secret);
    expect(redactSecrets(hf.text)).toBe(`please use ${REDACTED} for the deploy`);
  });

  it.each([
    "Twilio API key",
    "Mailgun key",
    "Mailchimp key",
    "Shopify token",
    "DigitalOcean token",
    "Databricks token",
    "Telegram bot token",
    "AWS access key id",
  ])("tells a hex or single-case %s by its prefix alone, without the preset", (name) => {
    const found = SECRET_CORPUS.find((s) => s.name === name);
    if (!found) throw new Error(`no sample ${name}`);
    expect(leaks(ownShapes(`lookup_${found.secret}`), found.secret)).toEqual([]);
  });

  it("widens a range the preset reports short to the end of the secret", () => {
    const secret = "Zq4mX9rT2vL7wK1pN8bJ5cH3fG6dS0aE+yU/iO2e";
    const out = redactSecrets(`"AWS_SECRET_ACCESS_KEY": "${secret}"`);
    expect(leaks(out, secret)).toEqual([]);
  });
});

describe("redactSecrets leaves ordinary text alone", () => {
  it.each([
    ["a ULID", "session 01JDQ6Z8X3T5V7N9B1C3D5F7H9 was archived"],
    ["UUIDs", "ids 550e8400-e29b-41d4-a716-446655440000 and 6BA7B810-9DAD-11D1-80B4-00C04FD430C8"],
    ["a sha256", "digest sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"],
    ["a commit URL", "see https://github.com/acme/app/commit/3f2a9b0c1d4e5f60718293a4b5c6d7e8f9012345"],
    ["a hashed asset", "loaded https://cdn.example.com/assets/app.8f3a2b1c.js in 20ms"],
    ["camelCase names", "call getUserProfileByIdFromCacheOrDatabase or handleWebSocketConnectionUpgrade2"],
    ["a path with a line", "at /home/bob/projects/sessiond/src/secrets/shapes.ts:42:7"],
    ["a long slug", "docs/how-to-configure-the-session-reset-policy-in-sessiond-2026-edition"],
    ["session keys", "keys telegram:123456789 and discord:1234567890123:987654321098"],
    ["token counts", "max_tokens=100, token_count: 5; Bearer tokens are fine"],
    ["the word Basic", "Basic training starts Monday; Basic auth is off"],
    ["a word after sk-", "try sk-learn-contrib-imbalanced-learn for that"],
    ["a password sentence", "the password reset email was sent to bob@example.com"],
    ["a package spec", "npm install @secretlint/secretlint-rule-preset-recommend@13.1.0"],
    ["addresses and dates", "connect to 192.168.1.10:8080 at 2026-12-01T10:00:00Z, ticket ABC-1234"],
    ["a short base64 word", "echo aGVsbG8gd29ybGQ= | base64 -d"],
    ["a user and group id", "docker run -u 1000:1000 -p 8080:80 app"],
    ["a port before a scoped package", "GET https://registry.npmjs.org:443/@scope/pkg"],
    ["words that end in pass", "bypass=true and compass: north, passenger=3"],
    ["an ssh URL", "git clone ssh://git@github.com:22/acme/app.git"],
    ["token counts with suffixes", "tokens_used: 120, max_tokens=5, token_limit: 4096"],
    ["mysql without a password", "mysql -u root -h db production"],
  ])("%s", (_what, text) => {
    expect(redactSecrets(text)).toBe(text);
  });
});
