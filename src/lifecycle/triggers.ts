import { SessiondError } from "../model/errors.js";

/** `session.reset_triggers` when the config names none. */
export const DEFAULT_RESET_TRIGGERS: readonly string[] = ["/new", "/reset"];

export interface ResetTriggerMatch {
  /** The configured trigger that matched, as configured. */
  trigger: string;
  /** The text after the trigger, trimmed: the first message of the fresh session, or "" when none. */
  rest: string;
}

export interface ResetTriggerOptions {
  /**
   * When set, `/new@name` counts only if `name` is this bot (case-insensitive), so a command addressed to
   * another bot in the same group is left alone. When unset, any `@name` suffix counts.
   */
  botUsername?: string;
}

/** Throws INVALID_ARGUMENT unless every trigger is a non-empty string without whitespace. */
export function validateResetTriggers(triggers: readonly string[]): void {
  if (!Array.isArray(triggers)) {
    throw new SessiondError("INVALID_ARGUMENT", "reset triggers must be an array of strings");
  }
  for (const trigger of triggers) {
    if (typeof trigger !== "string" || trigger.length === 0 || /\s/.test(trigger)) {
      throw new SessiondError(
        "INVALID_ARGUMENT",
        `reset trigger ${JSON.stringify(trigger)} must be a non-empty string without whitespace`,
        { details: { field: "session.reset_triggers", trigger } },
      );
    }
  }
}

/**
 * Whether `text` starts with a reset trigger. The trigger must be the whole first token (leading
 * whitespace is fine), compared case-insensitively, optionally with a bot mention (`/new@mybot`);
 * `/newsletter` and `/new-thing` are not triggers. An empty `triggers` list never matches.
 */
export function parseResetTrigger(
  text: string,
  triggers: readonly string[] = DEFAULT_RESET_TRIGGERS,
  options: ResetTriggerOptions = {},
): ResetTriggerMatch | undefined {
  validateResetTriggers(triggers);
  const trimmed = text.trimStart();
  const token = /^\S+/.exec(trimmed)?.[0];
  if (token === undefined) return undefined;
  const lowered = token.toLowerCase();
  const bot = options.botUsername?.replace(/^@/, "").toLowerCase();
  for (const trigger of triggers) {
    const wanted = trigger.toLowerCase();
    if (lowered === wanted || isMention(lowered, wanted, bot)) {
      return { trigger, rest: trimmed.slice(token.length).trim() };
    }
  }
  return undefined;
}

function isMention(token: string, trigger: string, bot: string | undefined): boolean {
  if (!token.startsWith(`${trigger}@`)) return false;
  const name = token.slice(trigger.length + 1);
  return name.length > 0 && (bot === undefined || name === bot);
}
