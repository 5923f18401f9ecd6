import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { type ErrorCode, isSessiondError } from "../model/errors.js";

/** Codes the gateway itself raises, besides the engine's SessiondError codes. */
export type GatewayErrorCode =
  | "UNAUTHORIZED"
  | "NOT_FOUND"
  | "METHOD_NOT_ALLOWED"
  | "PAYLOAD_TOO_LARGE"
  | "INVALID_JSON"
  | "INVALID_ARGUMENT"
  | "UNSUPPORTED_MEDIA_TYPE"
  | "SHUTTING_DOWN"
  | "RESULT_EVICTED"
  | "PLATFORM_UNREACHABLE"
  | "INTERNAL";

/** An error with its HTTP status, thrown by routes and turned into the one error shape. */
export class HttpError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    readonly code: GatewayErrorCode | ErrorCode,
    message: string,
    /** Sent as Retry-After (seconds) with the error. */
    readonly retryAfterS?: number,
  ) {
    super(message);
    this.name = "HttpError";
  }
}

export interface ErrorBody {
  error: { code: string; message: string };
}

/** The HTTP status of an engine error code. */
export function statusOf(code: ErrorCode): ContentfulStatusCode {
  if (code.startsWith("INVALID_")) return 400;
  switch (code) {
    case "SESSION_NOT_FOUND":
    case "AGENT_NOT_FOUND":
      return 404;
    case "SESSION_BUSY":
    case "QUEUE_DROPPED":
      return 429;
    case "TURN_INTERRUPTED":
    case "TURN_CANCELLED":
      return 409;
    case "CHANNEL_BUSY":
      return 503;
    case "NOTHING_TO_COMPACT":
      return 409;
    case "TURN_FAILED":
      return 502;
    case "SESSION_CHANGED":
    case "LEASE_LOST":
    case "SESSION_HAS_FORKS":
    case "KEY_TAKEN":
    case "SESSION_INCOGNITO":
      return 409;
    case "INCOGNITO_FULL":
      return 507;
    case "NOT_SUPPORTED":
      return 501;
    case "SUBJECT_ERASED":
      return 410;
    case "TURN_TIMEOUT":
      return 504;
    case "SEARCH_UNAVAILABLE":
      return 501;
    case "STORE_CLOSED":
    case "STORE_UNAVAILABLE":
    case "STORE_FAILED":
    case "STORE_BUSY":
      return 503;
    default:
      return 500;
  }
}

/** Seconds a client should wait before retrying after a full write queue (`STORE_BUSY`). */
export const STORE_BUSY_RETRY_AFTER_S = 1;

/** Headers an error's response carries besides its body. */
export function errorHeaders(error: unknown): Record<string, string> {
  if (error instanceof HttpError && error.retryAfterS !== undefined) {
    return { "retry-after": String(error.retryAfterS) };
  }
  // Another gateway took the session's lease over: the same request, sent again, is served by the holder.
  return isSessiondError(error, "STORE_BUSY") || isSessiondError(error, "LEASE_LOST")
    ? { "retry-after": String(STORE_BUSY_RETRY_AFTER_S) }
    : {};
}

/** Any thrown value as a status and the error body; internal details of unexpected errors stay in the log. */
export function describeError(error: unknown): { status: ContentfulStatusCode; body: ErrorBody } {
  if (error instanceof HttpError) {
    return { status: error.status, body: { error: { code: error.code, message: error.message } } };
  }
  if (isSessiondError(error)) {
    return { status: statusOf(error.code), body: { error: { code: error.code, message: error.message } } };
  }
  return { status: 500, body: { error: { code: "INTERNAL", message: "internal error" } } };
}

export function errorResponse(c: Context, error: unknown): Response {
  const { status, body } = describeError(error);
  return c.json(body, status, errorHeaders(error));
}

export function badRequest(message: string): HttpError {
  return new HttpError(400, "INVALID_ARGUMENT", message);
}
