import { createHmac, randomBytes } from "node:crypto";
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SessiondError } from "../model/errors.js";

/** Where the key for hashing session ids into `gen_ai.conversation.id` is kept when none is configured. */
export const CONVERSATION_KEY_FILE = "otel-conversation.key";

export interface TracingSettings {
  enabled: boolean;
  /** Why tracing is on or off, for the start-up line. */
  reason: string;
  /** SESSIOND_OTEL_RAW_CONVERSATION_ID=true: the session id itself, not its keyed hash. */
  rawConversationId: boolean;
}

const truthy = (value: string | undefined): boolean => value?.trim().toLowerCase() === "true";

/**
 * Tracing is on when OTEL_TRACES_EXPORTER names `otlp`, or when it is unset and an OTLP endpoint is
 * configured (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT). OTEL_SDK_DISABLED=true and
 * OTEL_TRACES_EXPORTER=none turn it off. Everything else (protocol, headers, sampler, service name) is
 * read by the OpenTelemetry SDK itself from the standard variables.
 */
export function tracingSettings(env: Record<string, string | undefined>): TracingSettings {
  const rawConversationId = truthy(env.SESSIOND_OTEL_RAW_CONVERSATION_ID);
  const off = (reason: string): TracingSettings => ({ enabled: false, reason, rawConversationId });
  if (truthy(env.OTEL_SDK_DISABLED)) return off("OTEL_SDK_DISABLED=true");
  const exporters = (env.OTEL_TRACES_EXPORTER ?? "")
    .split(",")
    .map((e) => e.trim().toLowerCase())
    .filter((e) => e !== "");
  if (exporters.length > 0) {
    if (!exporters.includes("otlp")) return off(`OTEL_TRACES_EXPORTER=${exporters.join(",")}`);
    return { enabled: true, reason: "OTEL_TRACES_EXPORTER=otlp", rawConversationId };
  }
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (endpoint) return { enabled: true, reason: "an OTLP endpoint is configured", rawConversationId };
  return off("no OTEL_TRACES_EXPORTER or OTLP endpoint");
}

/**
 * The HMAC key: SESSIOND_OTEL_CONVERSATION_KEY when set (gateways that share a store set the same one, so
 * their spans group alike), else 32 random bytes written once to the data dir (mode 0600) and reused.
 */
export function conversationKey(env: Record<string, string | undefined>, dataDir: string): Buffer {
  const configured = env.SESSIOND_OTEL_CONVERSATION_KEY;
  if (configured !== undefined && configured !== "") return Buffer.from(configured, "utf8");
  const file = join(dataDir, CONVERSATION_KEY_FILE);
  try {
    const hex = readFileSync(file, "utf8").trim();
    if (/^[0-9a-f]{64}$/.test(hex)) return Buffer.from(hex, "hex");
    throw new SessiondError("INVALID_ARGUMENT", `${file} does not hold a 64-digit hex key`);
  } catch (error) {
    if ((error as { code?: unknown }).code !== "ENOENT") throw error;
  }
  const key = randomBytes(32);
  mkdirSync(dataDir, { recursive: true });
  // "wx": two processes starting at once do not overwrite each other's key; the loser reads the winner's.
  try {
    writeFileSync(file, `${key.toString("hex")}\n`, { flag: "wx", mode: 0o600 });
    chmodSync(file, 0o600);
    return key;
  } catch (error) {
    if ((error as { code?: unknown }).code === "EEXIST") return conversationKey(env, dataDir);
    throw error;
  }
}

/** HMAC-SHA256 of the session id, 32 hex digits: the same for every turn of a session, not reversible. */
export function hashConversationId(key: Buffer, sessionId: string): string {
  return createHmac("sha256", key).update(sessionId, "utf8").digest("hex").slice(0, 32);
}
