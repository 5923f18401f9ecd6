export type ChatRole = "system" | "user" | "assistant";

/** One message as a chat-completion runtime takes it. */
export interface ChatMessage {
  role: ChatRole;
  content: string;
  /**
   * Set on context that hooks injected for this turn only (memory recall, environment…). Such a message is
   * never stored; `stripInjected` removes it.
   */
  autoInjected?: true;
}
