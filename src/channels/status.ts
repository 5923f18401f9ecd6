/** Where a channel's connection stands: `up` once its platform answered, `retrying` while it cannot be reached. */
export type ChannelState = "starting" | "up" | "retrying" | "stopped";

/** One channel's state as `/health`, `/metrics` and the log show it; `error` never holds a URL or a token. */
export interface ChannelStateReport {
  channel: string;
  state: ChannelState;
  /** When the state last changed (ISO 8601). */
  since: string;
  /** Why it is retrying: the last failure, as DeliveryError words it. */
  error?: string;
  /** Failed tries since it was last up. */
  failures: number;
}

/** The state of every enabled channel, kept by the supervisor that starts and restarts them. */
export class ChannelStatus {
  private readonly states = new Map<string, ChannelStateReport>();

  set(channel: string, state: ChannelState, error?: string): void {
    const before = this.states.get(channel);
    const failures =
      state === "retrying" ? (before?.failures ?? 0) + 1 : state === "up" ? 0 : (before?.failures ?? 0);
    const since = before?.state === state ? before.since : new Date().toISOString();
    this.states.set(channel, { channel, state, since, failures, ...(error !== undefined ? { error } : {}) });
  }

  get(channel: string): ChannelStateReport | undefined {
    return this.states.get(channel);
  }

  list(): ChannelStateReport[] {
    return [...this.states.values()].map((s) => ({ ...s }));
  }
}
