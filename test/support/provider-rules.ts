/**
 * The providers' rules for tool calls in a request's history, checked strictly (what their APIs answer
 * 400 for): an error message naming the first violation, or undefined when the request is valid.
 */

interface OpenAiMessage {
  role: string;
  content?: unknown;
  tool_calls?: Array<{ id: string }>;
  tool_call_id?: string;
}

/**
 * OpenAI chat completions: an assistant message with `tool_calls` must be followed by tool messages
 * answering each of its ids, once each, before any other message; a tool message answers one of them.
 */
export function openAiToolRule(messages: readonly OpenAiMessage[]): string | undefined {
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i] as OpenAiMessage;
    if (message.role === "tool") return `messages[${i}]: a tool message must answer a preceding tool_calls`;
    if (message.role !== "assistant" || !message.tool_calls?.length) continue;
    const open = new Set(message.tool_calls.map((call) => call.id));
    let j = i + 1;
    for (; j < messages.length && messages[j]?.role === "tool"; j++) {
      const id = messages[j]?.tool_call_id ?? "";
      if (!open.delete(id)) return `messages[${j}]: tool_call_id ${JSON.stringify(id)} answers no open call`;
    }
    if (open.size > 0) {
      return `messages[${i}]: an assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id' (missing ${[...open].join(", ")})`;
    }
    i = j - 1;
  }
  return undefined;
}

interface AnthropicBlock {
  type: string;
  id?: string;
  tool_use_id?: string;
}

interface AnthropicMessage {
  role: string;
  content: unknown;
}

/**
 * Anthropic messages: user first, roles alternating; an assistant message with `tool_use` blocks must be
 * followed by a user message that opens with a `tool_result` for each of them (once each), any other
 * block after those; a `tool_result` answers a `tool_use` of the message just before.
 */
export function anthropicToolRule(messages: readonly AnthropicMessage[]): string | undefined {
  if (messages[0]?.role !== "user") return "messages: the first message must use the user role";
  let open = new Set<string>();
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i] as AnthropicMessage;
    if (i > 0 && messages[i - 1]?.role === message.role) return `messages[${i}]: roles must alternate`;
    const blocks: AnthropicBlock[] = Array.isArray(message.content) ? message.content : [];
    if (message.role === "assistant") {
      if (open.size > 0) return `messages[${i}]: tool_use ids without tool_result blocks after them`;
      open = new Set(blocks.flatMap((b) => (b.type === "tool_use" && b.id ? [b.id] : [])));
      continue;
    }
    let resultsEnded = false;
    for (const [k, block] of blocks.entries()) {
      if (block.type !== "tool_result") {
        resultsEnded = true;
        continue;
      }
      if (resultsEnded) return `messages[${i}].content[${k}]: tool_result blocks must come first`;
      if (!open.delete(block.tool_use_id ?? ""))
        return `messages[${i}].content[${k}]: unexpected tool_use_id ${JSON.stringify(block.tool_use_id)}`;
    }
    if (open.size > 0) {
      return `messages[${i}]: tool_use ids were found without tool_result blocks immediately after: ${[...open].join(", ")}`;
    }
  }
  return undefined;
}
