import type { Entry, EntryInput, MessageEntry, ToolCall } from "../model/entry.js";
import type { Part } from "../model/envelope.js";
import { SessiondError } from "../model/errors.js";

/**
 * The OpenAI Agents SDK's history items (`AgentInputItem`), as far as sessiond stores them: messages,
 * function calls and their results. Declared here, structurally, so the package needs no `@openai/agents`.
 */
export type AgentItem = AgentMessageItem | FunctionCallItem | FunctionCallResultItem;

type ItemStatus = "in_progress" | "completed" | "incomplete";

export interface InputTextPart {
  type: "input_text";
  text: string;
}

export interface InputImagePart {
  type: "input_image";
  image?: string | { id: string };
}

export type AgentMessageItem =
  | { type?: "message"; id?: string; role: "user"; content: string | Array<InputTextPart | InputImagePart> }
  | { type?: "message"; id?: string; role: "system"; content: string }
  | {
      type?: "message";
      id?: string;
      role: "assistant";
      status: ItemStatus;
      content: Array<{ type: "output_text"; text: string } | { type: "refusal"; refusal: string }>;
    };

export interface FunctionCallItem {
  type: "function_call";
  id?: string;
  callId: string;
  name: string;
  /** JSON text, as the model wrote it. */
  arguments: string;
  status?: ItemStatus;
}

export interface FunctionCallResultItem {
  type: "function_call_result";
  id?: string;
  callId: string;
  name: string;
  status: ItemStatus;
  output: string | { type: "text"; text: string };
}

/** Arguments that are not a JSON object are kept as text under this name. */
const TEXT_ARGUMENTS = "_text";

const SUPPORTED = "user, system and assistant messages, function_call, function_call_result";

function unsupported(item: unknown, index: number): SessiondError {
  const kind = typeof item === "object" && item !== null ? (item as { type?: unknown }).type : typeof item;
  return new SessiondError(
    "INVALID_ARGUMENT",
    `item ${index}: ${JSON.stringify(kind ?? "message")} items are not stored (supported: ${SUPPORTED}); nothing was added`,
    { details: { index, type: kind } },
  );
}

function argumentsObject(text: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) {
      return parsed as Record<string, unknown>;
    }
  } catch {
    // Not JSON: kept as it came.
  }
  return { [TEXT_ARGUMENTS]: text };
}

function argumentsText(args: Record<string, unknown>): string {
  const keys = Object.keys(args);
  const only = args[TEXT_ARGUMENTS];
  return keys.length === 1 && typeof only === "string" ? only : JSON.stringify(args);
}

function userContent(content: unknown, index: number, item: unknown): { text: string; parts?: Part[] } {
  if (typeof content === "string") return { text: content };
  if (!Array.isArray(content)) throw unsupported(item, index);
  const texts: string[] = [];
  const parts: Part[] = [];
  for (const part of content as Array<{ type?: unknown; text?: unknown; image?: unknown }>) {
    if (part.type === "input_text" && typeof part.text === "string") texts.push(part.text);
    else if (part.type === "input_image" && typeof part.image === "string") {
      parts.push({ kind: "image", url: part.image });
    } else throw unsupported(item, index);
  }
  return { text: texts.join("\n"), ...(parts.length ? { parts } : {}) };
}

/** One entry per item, in order; throws for an item sessiond has no entry for, before anything is stored. */
export function itemsToEntries(items: readonly unknown[]): EntryInput[] {
  return items.map((item, index): EntryInput => {
    if (typeof item !== "object" || item === null) throw unsupported(item, index);
    const it = item as Record<string, unknown>;
    if (it.type === "function_call" && typeof it.callId === "string" && typeof it.name === "string") {
      const call: ToolCall = {
        id: it.callId,
        name: it.name,
        arguments: argumentsObject(typeof it.arguments === "string" ? it.arguments : ""),
      };
      return { type: "message", role: "assistant", content: "", toolCalls: [call] };
    }
    if (it.type === "function_call_result" && typeof it.callId === "string") {
      const output = it.output as FunctionCallResultItem["output"] | undefined;
      const text = typeof output === "string" ? output : output?.type === "text" ? output.text : undefined;
      if (text === undefined) throw unsupported(item, index);
      return { type: "message", role: "tool", content: text, toolCallId: it.callId };
    }
    if (it.type !== undefined && it.type !== "message") throw unsupported(item, index);
    if (it.role === "user") {
      const { text, parts } = userContent(it.content, index, item);
      return { type: "message", role: "user", content: text, ...(parts ? { parts } : {}) };
    }
    if ((it.role === "system" || it.role === "developer") && typeof it.content === "string") {
      return { type: "message", role: "system", content: it.content };
    }
    if (it.role === "assistant" && Array.isArray(it.content)) {
      const text = (it.content as Array<{ type?: unknown; text?: unknown; refusal?: unknown }>)
        .map((part) => {
          if (part.type === "output_text" && typeof part.text === "string") return part.text;
          if (part.type === "refusal" && typeof part.refusal === "string") return part.refusal;
          throw unsupported(item, index);
        })
        .join("");
      return { type: "message", role: "assistant", content: text };
    }
    throw unsupported(item, index);
  });
}

function userItem(entry: MessageEntry): AgentMessageItem {
  const images = (entry.parts ?? []).filter((p) => p.kind === "image" && p.url !== undefined);
  if (images.length === 0) return { type: "message", role: "user", content: entry.content };
  return {
    type: "message",
    role: "user",
    content: [
      ...(entry.content ? [{ type: "input_text" as const, text: entry.content }] : []),
      ...images.map((p) => ({ type: "input_image" as const, image: p.url as string })),
    ],
  };
}

/**
 * The items stored entries stand for: one per message entry (other entries are not items), a tool result
 * named after the call it answers.
 */
export function entriesToItems(entries: readonly Readonly<Entry>[]): AgentItem[] {
  const callNames = new Map<string, string>();
  const items: AgentItem[] = [];
  for (const entry of entries) {
    if (entry.type !== "message") continue;
    const call = entry.role === "assistant" && entry.content === "" ? entry.toolCalls?.[0] : undefined;
    if (call) {
      callNames.set(call.id, call.name);
      items.push({
        type: "function_call",
        callId: call.id,
        name: call.name,
        arguments: argumentsText(call.arguments),
        status: "completed",
      });
    } else if (entry.role === "tool") {
      const callId = entry.toolCallId ?? "";
      items.push({
        type: "function_call_result",
        callId,
        name: callNames.get(callId) ?? "",
        status: "completed",
        output: { type: "text", text: entry.content },
      });
    } else if (entry.role === "user") {
      items.push(userItem(entry));
    } else if (entry.role === "system") {
      items.push({ type: "message", role: "system", content: entry.content });
    } else {
      items.push({
        type: "message",
        role: "assistant",
        status: "completed",
        content: [{ type: "output_text", text: entry.content }],
      });
    }
  }
  return items;
}
