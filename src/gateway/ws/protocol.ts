import { isSessiondError } from "../../model/errors.js";

export type RequestId = string | number;

export interface RequestFrame {
  type: "req";
  id: RequestId;
  method: string;
  params: Record<string, unknown>;
  /** A W3C traceparent for this request only: it replaces the connection's (the upgrade request's). */
  traceparent?: string;
  /** Its tracestate; read only with a `traceparent` in the same frame. */
  tracestate?: string;
}

export interface WireError {
  code: string;
  message: string;
}

export type ResponseFrame =
  | { type: "res"; id: RequestId | null; ok: true; result: unknown }
  | { type: "res"; id: RequestId | null; ok: false; error: WireError };

export interface EventFrame {
  type: "event";
  event: string;
  data: unknown;
}

export type ServerFrame = ResponseFrame | EventFrame;

/** An error answered to the client as `{code, message}`; the connection stays open. */
export class ProtocolError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "ProtocolError";
  }
}

export type ParsedFrame =
  | { ok: true; frame: RequestFrame }
  | { ok: false; id: RequestId | null; error: WireError };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isRequestId(value: unknown): value is RequestId {
  return (
    (typeof value === "string" && value.length > 0) || (typeof value === "number" && Number.isFinite(value))
  );
}

/** Parses one text frame into a request; what cannot be a request comes back as the error to answer with. */
export function parseFrame(text: string): ParsedFrame {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, id: null, error: { code: "BAD_FRAME", message: "the frame is not valid JSON" } };
  }
  if (!isRecord(value)) {
    return { ok: false, id: null, error: { code: "BAD_FRAME", message: "the frame must be a JSON object" } };
  }
  const id = isRequestId(value.id) ? value.id : null;
  const invalid = (message: string): ParsedFrame => ({
    ok: false,
    id,
    error: { code: "INVALID_REQUEST", message },
  });
  if (value.type !== "req") return invalid('type must be "req"');
  if (id === null) return invalid("id must be a non-empty string or a number");
  if (typeof value.method !== "string" || value.method.length === 0) {
    return invalid("method must be a non-empty string");
  }
  if (value.params !== undefined && !isRecord(value.params)) return invalid("params must be an object");
  const frame: RequestFrame = { type: "req", id, method: value.method, params: value.params ?? {} };
  for (const field of ["traceparent", "tracestate"] as const) {
    const header = value[field];
    if (header === undefined) continue;
    if (typeof header !== "string") return invalid(`${field} must be a string`);
    frame[field] = header;
  }
  return { ok: true, frame };
}

/** The wire form of a failure: sessiond's and the protocol's own codes pass through, anything else is INTERNAL. */
export function wireError(error: unknown): WireError {
  if (error instanceof ProtocolError || isSessiondError(error)) {
    return { code: error.code, message: error.message };
  }
  return { code: "INTERNAL", message: "internal error" };
}

export function invalidParam(field: string, expected: string): ProtocolError {
  return new ProtocolError("INVALID_ARGUMENT", `params.${field} must be ${expected}`);
}

export function optionalString(params: Record<string, unknown>, field: string): string | undefined {
  const value = params[field];
  if (value === undefined) return undefined;
  if (typeof value !== "string" || value.length === 0) throw invalidParam(field, "a non-empty string");
  return value;
}

export function requiredString(params: Record<string, unknown>, field: string): string {
  const value = optionalString(params, field);
  if (value === undefined) throw invalidParam(field, "a non-empty string");
  return value;
}

export function optionalInteger(
  params: Record<string, unknown>,
  field: string,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
): number | undefined {
  const value = params[field];
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < min || value > max) {
    throw invalidParam(field, `an integer from ${min} to ${max}`);
  }
  return value;
}

export function optionalBoolean(params: Record<string, unknown>, field: string): boolean | undefined {
  const value = params[field];
  if (value === undefined) return undefined;
  if (typeof value !== "boolean") throw invalidParam(field, "a boolean");
  return value;
}
