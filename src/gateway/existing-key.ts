import type { Engine } from "../engine/api.js";
import { sessionNotFound } from "../store/session-log.js";

/** `key`, once it has a session; else `SESSION_NOT_FOUND` (404), the engine's words on every surface. */
export async function existingKey(engine: Engine, key: string): Promise<string> {
  if (!(await engine.sessions.get(key))) throw sessionNotFound(key);
  return key;
}
