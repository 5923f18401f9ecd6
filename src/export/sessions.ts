import { SessiondError } from "../model/errors.js";
import type { Session } from "../model/session.js";

export interface ExportOptions {
  /** Include the list of generations (json). Default: when more than one session is exported. */
  generations?: boolean;
}

export interface OrderedSessions {
  /** The newest generation given: the key's current session when it was included. */
  current: Session;
  /** Oldest first, the order their entries appear in. */
  generations: Session[];
}

/** The sessions of one key in generation order; an export needs at least one. */
export function orderSessions(sessions: readonly Session[]): OrderedSessions {
  const generations = [...sessions].sort((a, b) => a.generation - b.generation);
  const current = generations.at(-1);
  if (!current) throw new SessiondError("INVALID_ARGUMENT", "nothing to export: no session given");
  return { current, generations };
}

export function includeGenerations(sessions: readonly Session[], options: ExportOptions): boolean {
  return options.generations ?? sessions.length > 1;
}
