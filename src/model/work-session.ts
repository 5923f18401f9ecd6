/** The longest a work session may be granted for: a day. */
export const MAX_WORK_SESSION_MINUTES = 24 * 60;

/**
 * A work session (LoCrew): temporary permission for an ask-first agent to write without asking, in one
 * conversation, until `until`. It is not a runtime session: granting or ending one clears nothing.
 */
export interface WorkSession {
  agent: string;
  key: string;
  startedAt: number;
  until: number;
}
