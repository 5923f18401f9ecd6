import type { ToolCall } from "../model/entry.js";
import { isCredentialKey, redactSecrets } from "../secrets/index.js";
import { fitJson, type JsonValue } from "./fit-json.js";
import { FAILED_CALL_ID } from "./tool-recap.js";
import { truncate } from "./truncate.js";

export { redactSecrets } from "../secrets/index.js";
export { FAILED_CALL_ID, toolCallRecap } from "./tool-recap.js";

/** A tool call as a runtime reports it, before it is cut and stripped for history. */
export interface ReportedToolCall {
  id?: string;
  name: string;
  /** An object, or its JSON text; anything else is kept under `input`. */
  arguments: unknown;
  failed?: boolean;
}

export const TOOL_CALL_LIMITS = {
  /** Calls kept per reply; later ones are dropped. */
  maxCalls: 64,
  /** Each string (values, keys, names, ids) in a call. */
  maxStringChars: 80,
  /** The whole serialised arguments. */
  maxArgumentsChars: 200,
} as const;

const MAX_DEPTH = 16;
// More items than this cannot fit in 200 characters anyway; bounds the work on a huge input.
const MAX_ITEMS = 100;

/**
 * The calls of one assistant reply as they are kept in history (behaviours §7): at most 64; credential keys
 * left out at any depth; known secret shapes scrubbed from every string; each string then cut to 80 chars;
 * the arguments fitted into 200 JSON chars by `fitJson` (keys dropped from the end, `"…": n` marking how
 * many). A failed call's id becomes `failed`. Redaction runs before cutting, so a cut can never leave a
 * secret's prefix that no longer matches its shape.
 */
export function recordToolCalls(calls: readonly ReportedToolCall[]): ToolCall[] {
  return calls.slice(0, TOOL_CALL_LIMITS.maxCalls).map((call) => ({
    id: call.failed ? FAILED_CALL_ID : truncate(call.id ?? "", TOOL_CALL_LIMITS.maxStringChars),
    name: truncate(redactSecrets(call.name), TOOL_CALL_LIMITS.maxStringChars),
    arguments: recordArguments(call.arguments),
  }));
}

function recordArguments(raw: unknown): Record<string, unknown> {
  const cleaned = sanitize(toObject(raw), 0, new WeakSet());
  const object = isRecord(cleaned) ? cleaned : {};
  const fitted = fitJson(object, TOOL_CALL_LIMITS.maxArgumentsChars);
  return isRecord(fitted) ? fitted : {};
}

function toObject(raw: unknown): unknown {
  if (raw === undefined || raw === null) return {};
  if (typeof raw === "string") {
    try {
      const parsed: unknown = JSON.parse(raw);
      return isRecord(parsed) ? parsed : { input: parsed };
    } catch {
      return { input: raw };
    }
  }
  return isRecord(raw) ? raw : { input: raw };
}

function isRecord(value: unknown): value is { [key: string]: JsonValue } {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function sanitize(value: unknown, depth: number, seen: WeakSet<object>): JsonValue | undefined {
  switch (typeof value) {
    case "string":
      return truncate(redactSecrets(value), TOOL_CALL_LIMITS.maxStringChars);
    case "number":
      return Number.isFinite(value) ? value : null;
    case "boolean":
      return value;
    case "bigint":
      return truncate(String(value), TOOL_CALL_LIMITS.maxStringChars);
    case "object":
      break;
    default:
      return undefined;
  }
  if (value === null) return null;
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
  if (seen.has(value) || depth >= MAX_DEPTH) return "[…]";
  seen.add(value);
  try {
    if (Array.isArray(value)) {
      return value.slice(0, MAX_ITEMS).map((item) => sanitize(item, depth + 1, seen) ?? null);
    }
    const kept: Array<[string, JsonValue]> = [];
    for (const [key, item] of Object.entries(value)) {
      if (kept.length >= MAX_ITEMS) break;
      if (isCredentialKey(key)) continue;
      const clean = sanitize(item, depth + 1, seen);
      if (clean !== undefined)
        kept.push([truncate(redactSecrets(key), TOOL_CALL_LIMITS.maxStringChars), clean]);
    }
    return Object.fromEntries(kept);
  } finally {
    // Only ancestors count as cycles; the same object twice side by side is fine.
    seen.delete(value);
  }
}
