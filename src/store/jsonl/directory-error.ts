import { SessiondError } from "../../model/errors.js";
import { messageOf } from "../group-commit.js";

/** A failure of the session directory as the store reports it (a SessiondError passes through). */
export function asStoreError(error: unknown, path: string): SessiondError {
  if (error instanceof SessiondError) return error;
  return new SessiondError(
    "STORE_UNAVAILABLE",
    `the session directory failed (${path}): ${messageOf(error)}`,
    { cause: error },
  );
}

/** Runs `run`, a failure of which is reported as `asStoreError` says. */
export function guarded<T>(path: string, run: () => T): T {
  try {
    return run();
  } catch (error) {
    throw asStoreError(error, path);
  }
}
