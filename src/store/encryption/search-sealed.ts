import { SessiondError } from "../../model/errors.js";

/** Search on an encrypted store: sealed bodies index nothing, so it is refused rather than answered empty. */
export function searchSealed(where: string): SessiondError {
  return new SessiondError(
    "SEARCH_UNAVAILABLE",
    `${where}: search is off on an encrypted store (store.encryption): message text is sealed and indexes nothing`,
  );
}
