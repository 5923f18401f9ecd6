import type { Sender } from "../model/envelope.js";
import type { ChatMessage, ChatRole } from "./chat-message.js";

/** One message of a conversation, as the window takes it. */
export interface WindowMessage {
  role: ChatRole;
  content: string;
  sender?: Sender;
  /**
   * Sender ids of the participants this message is addressed to (the platform's mentions, or the target of a
   * reply). It is addressed to the agent when this holds `self`.
   */
  addressedTo?: readonly string[];
}

export interface WindowOptions {
  /** Most recent messages considered. Default 60. */
  maxMessages?: number;
  /** The model's context window in tokens. Default 16,000. */
  contextWindow?: number;
  /** Share of the window the history may use. Default 0.5. */
  budgetFraction?: number;
  /** Characters per token for the budget. Default 3.5. */
  charsPerToken?: number;
  /** The agent's own sender id: its messages are the assistant's, anyone else's are user messages. */
  self?: string;
  /**
   * Prefix other participants' messages with `[Name]` / `[Name → you]`. Default: only when the conversation
   * is multi-party, i.e. the messages come from two or more senders other than `self`, or from another
   * assistant.
   */
  multiParty?: boolean;
  /** Appended as a user message when the window is empty or ends with the assistant. */
  operatorPrompt?: string;
}

export const WINDOW_DEFAULTS = {
  maxMessages: 60,
  contextWindow: 16_000,
  budgetFraction: 0.5,
  charsPerToken: 3.5,
  operatorPrompt: "[Human operator]: Please continue.",
} as const;

/** The history budget in characters: floor(contextWindow × budgetFraction × charsPerToken). */
export function windowBudget(options: WindowOptions = {}): number {
  const contextWindow = options.contextWindow ?? WINDOW_DEFAULTS.contextWindow;
  const fraction = options.budgetFraction ?? WINDOW_DEFAULTS.budgetFraction;
  const charsPerToken = options.charsPerToken ?? WINDOW_DEFAULTS.charsPerToken;
  return Math.floor(contextWindow * fraction * charsPerToken);
}

/**
 * The context a stateless model run sees (behaviours §4, LoCrew): the most recent `maxMessages`, cut from
 * the oldest end to the character budget (prefixes included, the newest always kept even alone over the
 * budget), consecutive messages of one role merged (joined by a blank line), leading assistant messages
 * dropped, and the operator prompt appended when the result is empty or ends with the assistant.
 */
export function statelessWindow(
  messages: readonly WindowMessage[],
  options: WindowOptions = {},
): ChatMessage[] {
  const maxMessages = Math.max(0, options.maxMessages ?? WINDOW_DEFAULTS.maxMessages);
  const budget = windowBudget(options);
  const multiParty = options.multiParty ?? isMultiParty(messages, options.self);

  const recent = maxMessages === 0 ? [] : messages.slice(-maxMessages);
  const kept: ChatMessage[] = [];
  let used = 0;
  for (let i = recent.length - 1; i >= 0; i -= 1) {
    const message = toChat(recent[i]!, options.self, multiParty);
    used += message.content.length;
    if (used > budget && kept.length > 0) break;
    kept.push(message);
  }
  kept.reverse();

  // Leading assistant messages go, but a system message before them stays where it is.
  const firstUser = kept.findIndex((message) => message.role === "user");
  const window: ChatMessage[] = [];
  kept.forEach((message, index) => {
    if (message.role === "assistant" && (firstUser === -1 || index < firstUser)) return;
    const previous = window.at(-1);
    if (previous !== undefined && previous.role === message.role) {
      previous.content = `${previous.content}\n\n${message.content}`;
    } else {
      window.push(message);
    }
  });

  if (window.length === 0 || window.at(-1)?.role === "assistant") {
    window.push({ role: "user", content: options.operatorPrompt ?? WINDOW_DEFAULTS.operatorPrompt });
  }
  return window;
}

function isOwn(message: WindowMessage, self: string | undefined): boolean {
  if (self !== undefined && message.sender !== undefined) return message.sender.id === self;
  return message.role === "assistant";
}

function isMultiParty(messages: readonly WindowMessage[], self: string | undefined): boolean {
  const others = new Set<string>();
  for (const message of messages) {
    if (message.role === "system" || isOwn(message, self)) continue;
    if (message.role === "assistant") return true;
    if (message.sender !== undefined) others.add(message.sender.id);
    if (others.size > 1) return true;
  }
  return false;
}

function toChat(message: WindowMessage, self: string | undefined, multiParty: boolean): ChatMessage {
  if (message.role === "system") return { role: "system", content: message.content };
  if (isOwn(message, self)) return { role: "assistant", content: message.content };
  if (!multiParty || message.sender === undefined) return { role: "user", content: message.content };
  const name = message.sender.name ?? message.sender.id;
  const toYou = self !== undefined && message.addressedTo?.includes(self) === true;
  return { role: "user", content: `[${name}${toYou ? " → you" : ""}] ${message.content}` };
}
