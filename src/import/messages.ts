import { type ReportedToolCall, recordToolCalls, TOOL_CALL_LIMITS } from "../context/tool-calls.js";
import { truncate } from "../context/truncate.js";
import type { EntryInput, Role } from "../model/entry.js";
import type { Part } from "../model/envelope.js";
import { redactSecrets } from "../secrets/index.js";

/** The text of a message content that may be a string or a list of typed parts (OpenAI, Anthropic, OpenClaw). */
export function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content))
    return content === undefined || content === null ? "" : JSON.stringify(content);
  const texts: string[] = [];
  for (const part of content) {
    if (typeof part === "string") texts.push(part);
    else if (
      isObject(part) &&
      typeof part.text === "string" &&
      (part.type === undefined || part.type === "text")
    )
      texts.push(part.text);
  }
  return texts.join("\n");
}

/** Thinking blocks among content parts (OpenClaw `thinking`, Anthropic `thinking`), as parts of their own. */
export function thinkingPartsOf(content: unknown): Part[] {
  if (!Array.isArray(content)) return [];
  return content.flatMap((part): Part[] =>
    isObject(part) && part.type === "thinking" && typeof part.thinking === "string" && part.thinking !== ""
      ? [{ kind: "thinking", text: part.thinking }]
      : [],
  );
}

/** A `reasoning_content` string (nanobot, CrabTalk, PicoClaw) as a thinking part; none when empty. */
export function reasoningParts(value: unknown): Part[] {
  return typeof value === "string" && value !== "" ? [{ kind: "thinking", text: value }] : [];
}

/** OpenAI-style `tool_calls` ({id, function: {name, arguments}}) or flat ({id, name, arguments}). */
export function toolCallsOf(raw: unknown): ReportedToolCall[] {
  if (!Array.isArray(raw)) return [];
  const calls: ReportedToolCall[] = [];
  for (const call of raw) {
    if (!isObject(call)) continue;
    const fn = isObject(call.function) ? call.function : call;
    const name = typeof fn.name === "string" ? fn.name : undefined;
    if (!name) continue;
    calls.push({
      ...(typeof call.id === "string" ? { id: call.id } : {}),
      name,
      arguments: fn.arguments ?? fn.input ?? {},
    });
  }
  return calls;
}

/** OpenClaw and Anthropic put tool calls among the content parts. */
export function toolCallPartsOf(content: unknown): ReportedToolCall[] {
  if (!Array.isArray(content)) return [];
  return content.flatMap((part): ReportedToolCall[] => {
    if (!isObject(part) || (part.type !== "toolCall" && part.type !== "tool_use")) return [];
    if (typeof part.name !== "string") return [];
    return [
      {
        ...(typeof part.id === "string" ? { id: part.id } : {}),
        name: part.name,
        arguments: part.arguments ?? part.input ?? {},
      },
    ];
  });
}

const ROLES: Record<string, Role> = { user: "user", assistant: "assistant", system: "system" };
const TOOL_RESULT_ROLES = new Set(["tool", "toolResult", "tool_result", "function"]);

export type MessageRead = { entry: EntryInput } | { error: string };

export interface MessageOptions {
  ts?: number;
  toolCalls?: ReportedToolCall[];
  /** On a tool result: the call it answers. */
  toolCallId?: unknown;
  parts?: Part[];
}

/**
 * A chat message of another system as an entry, through the same redaction as any other append: tool
 * calls recorded as history keeps them (§7: cut, credentials dropped, secrets scrubbed); a tool result
 * becomes a `tool` message linked to its call, its text scrubbed of secrets.
 */
export function messageEntry(role: unknown, content: unknown, options: MessageOptions = {}): MessageRead {
  const isTool = typeof role === "string" && TOOL_RESULT_ROLES.has(role);
  const known: Role | undefined = isTool ? "tool" : typeof role === "string" ? ROLES[role] : undefined;
  if (!known) return { error: `unknown role ${JSON.stringify(role)}` };
  const text = textOf(content);
  const entry: EntryInput = { type: "message", role: known, content: isTool ? redactSecrets(text) : text };
  if (options.ts !== undefined) entry.ts = options.ts;
  if (isTool && typeof options.toolCallId === "string" && options.toolCallId !== "")
    entry.toolCallId = truncate(options.toolCallId, TOOL_CALL_LIMITS.maxStringChars);
  const calls = options.toolCalls ?? [];
  if (calls.length > 0 && !isTool) entry.toolCalls = recordToolCalls(calls);
  if (options.parts && options.parts.length > 0) entry.parts = options.parts;
  return { entry };
}

/** Milliseconds since the epoch from an ISO string, seconds or milliseconds; undefined when unreadable. */
export function timeOf(value: unknown): number | undefined {
  if (typeof value === "number" && Number.isFinite(value) && value >= 0) {
    return value < 1e11 ? Math.round(value * 1000) : Math.round(value);
  }
  if (typeof value === "string" && value !== "") {
    const numeric = Number(value);
    if (Number.isFinite(numeric)) return timeOf(numeric);
    const ms = Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(value) ? value : `${value.replace(" ", "T")}Z`);
    return Number.isFinite(ms) ? ms : undefined;
  }
  return undefined;
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
