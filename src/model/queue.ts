/**
 * What happens to a message that arrives while its session's turn runs (OpenClaw's queue modes):
 * `followup` waits and runs as its own turn (FIFO); `collect` waits with the others and they run as one
 * turn (each stored as its own user entry); `steer` is handed to the running turn where the runtime takes
 * it, else waits as `followup`; `interrupt` aborts the running turn and runs next.
 */
export const QUEUE_MODES = ["followup", "collect", "steer", "interrupt"] as const;
export type QueueMode = (typeof QUEUE_MODES)[number];

/** When a session's queue is full: drop the oldest waiting input, refuse the new one, or fold the oldest into one summary entry. */
export const DROP_POLICIES = ["old", "new", "summarize"] as const;
export type DropPolicy = (typeof DROP_POLICIES)[number];

export interface QueueSettings {
  mode: QueueMode;
  /** Quiet time after the last arrival before a waiting batch starts. */
  debounceMs: number;
  /** Inputs that may wait on one session. */
  cap: number;
  drop: DropPolicy;
}

export const DEFAULT_QUEUE: QueueSettings = { mode: "followup", debounceMs: 500, cap: 20, drop: "new" };

/** `/queue collect` (also `/queue@bot collect`, any case): the mode it names; undefined when the text is not that command. */
export function parseQueueCommand(text: string): { mode: QueueMode | undefined; raw: string } | undefined {
  const match = /^\/queue(?:@\S+)?(?:\s+(\S+))?\s*$/i.exec(text.trim());
  if (!match) return undefined;
  const raw = (match[1] ?? "").toLowerCase();
  return { mode: QUEUE_MODES.find((m) => m === raw), raw };
}
