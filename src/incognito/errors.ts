import { SessiondError } from "../model/errors.js";

/** What an incognito session refuses (export, sharing, a move to a stored key): it never leaves memory. */
export function incognitoRefusal(key: string, what: string): SessiondError {
  return new SessiondError(
    "SESSION_INCOGNITO",
    `session ${JSON.stringify(key)} is incognito (kept in this process's memory only): it cannot be ${what}`,
    { details: { key } },
  );
}
