/** Every error sessiond raises on purpose carries one of these codes. */
export type ErrorCode =
  | "INVALID_KEY"
  | "INVALID_ENTRY"
  | "INVALID_ARGUMENT"
  | "SESSION_NOT_FOUND"
  | "SESSION_BUSY"
  | "TURN_FAILED"
  | "TURN_CANCELLED"
  | "TURN_TIMEOUT"
  | "TURN_INTERRUPTED"
  | "TURN_TAKEN_OVER"
  | "QUEUE_DROPPED"
  | "STORE_CLOSED"
  | "STORE_UNAVAILABLE"
  | "STORE_BUSY"
  | "STORE_CORRUPT"
  | "STORE_FAILED"
  | "STORE_BUSY"
  | "SESSION_CHANGED"
  | "CONFIG_INVALID"
  | "COMPACTION_FAILED"
  | "NOTHING_TO_COMPACT"
  | "AGENT_NOT_FOUND"
  | "ADDRESS_IN_USE"
  | "DATA_DIR_IN_USE"
  | "CHANNEL_BUSY"
  | "PACKAGE_MISSING"
  | "STORE_SCHEMA_NEWER"
  | "LEASE_LOST"
  | "SEARCH_UNAVAILABLE"
  | "SESSION_HAS_FORKS"
  | "KEY_TAKEN"
  | "NOT_SUPPORTED"
  | "SESSION_INCOGNITO"
  | "INCOGNITO_FULL"
  /** A redelivered message of a subject erased by `forget --subject`. */
  | "SUBJECT_ERASED";

export class SessiondError extends Error {
  readonly code: ErrorCode;
  readonly details: Readonly<Record<string, unknown>> | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    options?: { cause?: unknown; details?: Record<string, unknown> },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = "SessiondError";
    this.code = code;
    this.details = options?.details;
  }
}

export function isSessiondError(error: unknown, code?: ErrorCode): error is SessiondError {
  return error instanceof SessiondError && (code === undefined || error.code === code);
}
