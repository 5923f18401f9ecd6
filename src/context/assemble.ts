import type { CompactionEntry, Entry, MessageEntry } from "../model/entry.js";
import type { ChatMessage } from "./chat-message.js";
import { type InjectedContext, injectedMessage } from "./injected.js";
import { estimateMessagesTokens } from "./tokens.js";
import { toolCallRecap } from "./tool-recap.js";
import { statelessWindow, type WindowMessage, type WindowOptions } from "./window.js";

export interface AssembleInput {
  /** The agent's instructions: the system message. */
  instructions?: string;
  /** The latest compaction, whose summary stands for everything before the kept entries. */
  summary?: CompactionEntry;
  /** The kept entries, in seq order. */
  entries: readonly Entry[];
  /** Context the hooks supplied for this turn; never stored. */
  injected?: readonly InjectedContext[];
  /** Who the tool-call recap line says recorded the calls. Default `sessiond`. */
  toolRecapLabel?: string;
  /**
   * When set, the history (not the instructions, summary or injected context) goes through
   * `statelessWindow` with these options: budget, role merging, sender prefixes, operator prompt.
   */
  window?: WindowOptions;
}

export interface AssembledContext {
  messages: ChatMessage[];
  /** Cheap estimate of the whole prompt: Σ (bytes / 4, rounded up) + 4 per message. */
  tokensEstimate: number;
}

export const SUMMARY_HEADER = "[Summary of the conversation so far]";

/**
 * What a runtime gets for a turn, in this order: the instructions as the system message; the compaction
 * summary as a user message (CrabTalk); the history; the injected context just before the newest user
 * message (at the end when there is none). Pure: nothing here is stored.
 *
 * History: message entries only (notes, usage, titles, resets and compactions are not sent); entries
 * marked `autoInjected` are ignored; `tool` results are dropped, since results are not kept (behaviours §7)
 * and a lone result without its call is refused by most providers; an assistant reply with tool calls starts
 * with the recap line; messages left empty are skipped.
 */
export function assembleContext(input: AssembleInput): AssembledContext {
  const history: WindowMessage[] = [];
  for (const entry of input.entries) {
    const message = historyMessage(entry, input.toolRecapLabel);
    if (message !== undefined) history.push(message);
  }
  const turns: ChatMessage[] =
    input.window === undefined
      ? history.map((message) => ({ role: message.role, content: message.content }))
      : statelessWindow(history, input.window);

  const injected = (input.injected ?? [])
    .filter((context) => context.content.length > 0)
    .map(injectedMessage);
  let newestUser = -1;
  for (let i = turns.length - 1; i >= 0 && newestUser === -1; i -= 1) {
    if (turns[i]!.role === "user") newestUser = i;
  }
  if (newestUser === -1) turns.push(...injected);
  else turns.splice(newestUser, 0, ...injected);

  const messages: ChatMessage[] = [];
  if (input.instructions !== undefined && input.instructions.length > 0) {
    messages.push({ role: "system", content: input.instructions });
  }
  if (input.summary !== undefined && input.summary.summary.length > 0) {
    messages.push({ role: "user", content: `${SUMMARY_HEADER}\n${input.summary.summary}` });
  }
  messages.push(...turns);
  return { messages, tokensEstimate: estimateMessagesTokens(messages) };
}

function historyMessage(entry: Entry, label: string | undefined): WindowMessage | undefined {
  if (entry.type !== "message" || entry.autoInjected === true || entry.role === "tool") return undefined;
  const content = entry.role === "assistant" ? withRecap(entry, label) : entry.content;
  if (content.length === 0) return undefined;
  const message: WindowMessage = { role: entry.role, content };
  if (entry.sender !== undefined) message.sender = entry.sender;
  return message;
}

function withRecap(entry: MessageEntry, label: string | undefined): string {
  const recap = entry.toolCalls === undefined ? "" : toolCallRecap(entry.toolCalls, label);
  if (recap.length === 0) return entry.content;
  return entry.content.length === 0 ? recap : `${recap}\n${entry.content}`;
}
