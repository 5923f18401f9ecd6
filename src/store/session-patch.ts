import { SessiondError } from "../model/errors.js";
import type { Session, SessionInit } from "../model/session.js";
import { cloneSession } from "./session-log.js";
import type { SessionPatch } from "./store.js";

/** The session with the patch applied (a copy). */
export function applyPatch(session: Session, patch: SessionPatch): Session {
  const next = cloneSession(session);
  for (const [name, value] of Object.entries(patch.overrides ?? {})) {
    if (value === null) delete next.overrides[name];
    else if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") {
      next.overrides[name] = value;
    } else {
      throw new SessiondError(
        "INVALID_ARGUMENT",
        `override ${name} must be a string, number, boolean or null`,
      );
    }
  }
  return next;
}

export function requireInit(key: string, init: SessionInit | undefined): SessionInit {
  if (!init) {
    throw new SessiondError(
      "INVALID_ARGUMENT",
      `key ${JSON.stringify(key)} has no session yet: pass how to create it`,
    );
  }
  return init;
}
