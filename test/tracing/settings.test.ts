import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  CONVERSATION_KEY_FILE,
  conversationKey,
  hashConversationId,
  tracingSettings,
} from "../../src/tracing/settings.js";

const dir = mkdtempSync(join(tmpdir(), "sessiond-otel-settings-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("which OTEL_* variables turn tracing on", () => {
  it.each([
    [{}, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" }, true],
    [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://127.0.0.1:4318/v1/traces" }, true],
    [{ OTEL_TRACES_EXPORTER: "otlp" }, true],
    [{ OTEL_TRACES_EXPORTER: "console, otlp" }, true],
    [{ OTEL_TRACES_EXPORTER: "none", OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" }, false],
    [{ OTEL_TRACES_EXPORTER: "zipkin" }, false],
    [{ OTEL_SDK_DISABLED: "TRUE", OTEL_TRACES_EXPORTER: "otlp" }, false],
    [{ OTEL_SDK_DISABLED: "false", OTEL_TRACES_EXPORTER: "otlp" }, true],
  ] as Array<[Record<string, string>, boolean]>)("%o → %s", (env, enabled) => {
    expect(tracingSettings(env).enabled).toBe(enabled);
  });

  it("the raw session id only when asked for", () => {
    expect(tracingSettings({}).rawConversationId).toBe(false);
    expect(tracingSettings({ SESSIOND_OTEL_RAW_CONVERSATION_ID: "true" }).rawConversationId).toBe(true);
  });
});

describe("the conversation key", () => {
  it("a configured key gives the HMAC-SHA256 of the session id, 32 hex digits", () => {
    const key = conversationKey({ SESSIOND_OTEL_CONVERSATION_KEY: "shared secret" }, dir);
    // openssl: printf 01J0SESSION | openssl dgst -sha256 -hmac "shared secret" (first 32 digits)
    expect(hashConversationId(key, "01J0SESSION")).toBe("5d082f2bd5660213f765300edd72d5a9");
    expect(hashConversationId(key, "01J0SESSION")).not.toBe(hashConversationId(key, "01J0SESSIOM"));
  });

  it("a damaged key file is a clear error, not a new key", () => {
    const bad = mkdtempSync(join(dir, "bad-"));
    writeFileSync(join(bad, CONVERSATION_KEY_FILE), "not hex\n");
    expect(() => conversationKey({}, bad)).toThrow(/does not hold a 64-digit hex key/);
  });
});
