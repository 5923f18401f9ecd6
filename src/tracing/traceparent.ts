import type { Context, Span } from "@opentelemetry/api";

type Api = typeof import("@opentelemetry/api");

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/**
 * A W3C `traceparent` (version 00, or a later one read as 00) as a remote parent context; undefined when
 * it is malformed or all-zero, so a bad header starts a new trace instead of failing the request.
 */
export function parseTraceparent(api: Api, header: string, tracestate?: string): Context | undefined {
  const match = TRACEPARENT.exec(header.trim().toLowerCase());
  if (!match) return undefined;
  const [, version, traceId, spanId, flags, rest] = match as unknown as [
    string,
    string,
    string,
    string,
    string,
    string?,
  ];
  if (version === "ff" || (version === "00" && rest !== undefined)) return undefined;
  if (!api.isValidTraceId(traceId) || !api.isValidSpanId(spanId)) return undefined;
  const state = tracestate ? api.createTraceState(tracestate) : undefined;
  return api.trace.setSpanContext(api.ROOT_CONTEXT, {
    traceId,
    spanId,
    traceFlags: Number.parseInt(flags, 16) & 1,
    isRemote: true,
    ...(state ? { traceState: state } : {}),
  });
}

/** The `traceparent` (and `tracestate`) headers naming `span` as the parent of what the request does. */
export function traceparentOf(span: Span): Record<string, string> {
  const context = span.spanContext();
  const headers: Record<string, string> = {
    traceparent: `00-${context.traceId}-${context.spanId}-0${context.traceFlags & 1}`,
  };
  const state = context.traceState?.serialize();
  if (state) headers.tracestate = state;
  return headers;
}
