import type { Entry, MessageEntry, ToolCall } from "../../model/entry.js";
import type { Part } from "../../model/envelope.js";

/**
 * A message's tool calls, tool-call id and reasoning in CrabTalk v0.0.19's own fields (`Message` in
 * `crates/core/src/model/message.rs`, peer-formats.md §2.3): empty ones left out, as CrabTalk writes them.
 * sessiond's own fields (`toolCalls`, `toolCallId`, `parts`) stay on the line too and win when sessiond reads it.
 */
export interface CrabtalkFields {
  reasoning_content?: string;
  name?: string;
  tool_call_id?: string;
  tool_calls?: Array<{ id: string; type: "function"; function: { name: string; arguments: string } }>;
}

/** The field names, which sessiond's reader strips from its own lines. */
export const CRABTALK_FIELDS = ["reasoning_content", "name", "tool_call_id", "tool_calls"] as const;

/** `callName`: the name of the call a tool result answers, when the entries at hand hold it. */
export function crabtalkFields(entry: MessageEntry, callName?: string): CrabtalkFields {
  const fields: CrabtalkFields = {};
  const reasoning = (entry.parts ?? [])
    .filter((p) => p.kind === "thinking" && p.text)
    .map((p) => p.text)
    .join("\n");
  if (reasoning !== "") fields.reasoning_content = reasoning;
  if (entry.role === "tool" && entry.toolCallId) {
    if (callName) fields.name = callName;
    fields.tool_call_id = entry.toolCallId;
  }
  if (entry.toolCalls?.length)
    fields.tool_calls = entry.toolCalls.map((call) => ({
      id: call.id,
      type: "function",
      function: { name: call.name, arguments: JSON.stringify(call.arguments) },
    }));
  return fields;
}

/** The names of the calls among `entries`, by call id: what a tool result's `name` is. */
export function callNames(entries: readonly Entry[]): Map<string, string> {
  const names = new Map<string, string>();
  for (const e of entries)
    if (e.type === "message") for (const call of e.toolCalls ?? []) names.set(call.id, call.name);
  return names;
}

/** A CrabTalk line's fields as sessiond's (for lines CrabTalk wrote, which carry no sessiond fields). */
export function fromCrabtalkFields(value: Record<string, unknown>): {
  toolCalls?: ToolCall[];
  toolCallId?: string;
  parts?: Part[];
} {
  const out: { toolCalls?: ToolCall[]; toolCallId?: string; parts?: Part[] } = {};
  if (Array.isArray(value.tool_calls)) {
    const calls = value.tool_calls.flatMap((raw): ToolCall[] => {
      if (!isObject(raw) || !isObject(raw.function)) return [];
      const fn = raw.function;
      return [
        {
          id: typeof raw.id === "string" ? raw.id : "",
          name: typeof fn.name === "string" ? fn.name : "",
          arguments: parsedArguments(fn.arguments),
        },
      ];
    });
    if (calls.length) out.toolCalls = calls;
  }
  if (typeof value.tool_call_id === "string" && value.tool_call_id !== "")
    out.toolCallId = value.tool_call_id;
  if (typeof value.reasoning_content === "string" && value.reasoning_content !== "")
    out.parts = [{ kind: "thinking", text: value.reasoning_content }];
  return out;
}

/** CrabTalk's `arguments` is a JSON string; one that is not a JSON object is kept whole under `input`. */
function parsedArguments(raw: unknown): Record<string, unknown> {
  if (typeof raw !== "string") return {};
  try {
    const value: unknown = JSON.parse(raw);
    if (isObject(value)) return value;
  } catch {}
  return { input: raw };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
