import { currentTraceHeaders } from "./spans.js";

/** What the OpenTelemetry env-carrier spec names the W3C Trace Context fields in an environment. */
const CARRIED = { traceparent: "TRACEPARENT", tracestate: "TRACESTATE" } as const;

/**
 * The environment for a runtime's child process (Claude Code, Codex) with the current span's trace context
 * in TRACEPARENT / TRACESTATE, per "Environment Variables as Context Propagation Carriers": a copy of `base`
 * (the parent's own environment is never modified), whose inherited TRACEPARENT / TRACESTATE are replaced,
 * so the child never pairs our traceparent with someone else's tracestate. Nothing else is added or
 * removed: the child gets the variables it would inherit anyway. Undefined when tracing is off or no span
 * is current; the caller then passes no environment and the child inherits as before.
 */
export function childTraceEnv(
  base: Record<string, string | undefined> = process.env,
): Record<string, string> | undefined {
  const headers = currentTraceHeaders();
  if (!headers) return undefined;
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(base)) {
    // Names compared in upper case: Windows' are case-insensitive (`TraceParent` is TRACEPARENT there).
    const upper = name.toUpperCase();
    if (value !== undefined && upper !== CARRIED.traceparent && upper !== CARRIED.tracestate)
      env[name] = value;
  }
  env[CARRIED.traceparent] = headers.traceparent as string;
  if (headers.tracestate) env[CARRIED.tracestate] = headers.tracestate;
  return env;
}
