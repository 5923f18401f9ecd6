import { SessiondError } from "../model/errors.js";

type Env = Record<string, string | undefined>;
type Sdk = typeof import("@opentelemetry/sdk-trace");

/*
 * The standard OTEL_* variables of the trace SDK itself. `@opentelemetry/sdk-trace` 3.x reads none of them
 * (reading the environment moved to sdk-node), so sessiond does; the OTLP exporter still reads its own
 * OTEL_EXPORTER_OTLP_* variables. A value that cannot be read stops `serve` with INVALID_ARGUMENT naming it,
 * rather than exporting differently from what was configured.
 */

const SAMPLERS = [
  "always_on",
  "always_off",
  "traceidratio",
  "parentbased_always_on",
  "parentbased_always_off",
  "parentbased_traceidratio",
] as const;

function invalid(name: string, value: string, expected: string): SessiondError {
  return new SessiondError("INVALID_ARGUMENT", `${name}=${JSON.stringify(value)}: expected ${expected}`);
}

function count(env: Env, name: string, min: number): number | undefined {
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < min) throw invalid(name, raw, `an integer of at least ${min}`);
  return value;
}

/** OTEL_BSP_*: the batch span processor's delay, export timeout, queue and batch sizes. */
export function batchOptions(env: Env) {
  const queue = count(env, "OTEL_BSP_MAX_QUEUE_SIZE", 1);
  const batch = count(env, "OTEL_BSP_MAX_EXPORT_BATCH_SIZE", 1);
  const options = {
    scheduledDelayMillis: count(env, "OTEL_BSP_SCHEDULE_DELAY", 0),
    exportTimeoutMillis: count(env, "OTEL_BSP_EXPORT_TIMEOUT", 0),
    maxQueueSize: queue,
    // The spec: a batch size over the queue size is capped at it.
    maxExportBatchSize: batch !== undefined && queue !== undefined ? Math.min(batch, queue) : batch,
  };
  return Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) as {
    [K in keyof typeof options]?: number;
  };
}

/** OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG (a ratio from 0 to 1, default 1); default parentbased_always_on. */
export function samplerFrom(sdk: Sdk, env: Env) {
  const name = env.OTEL_TRACES_SAMPLER?.trim().toLowerCase() || "parentbased_always_on";
  if (!(SAMPLERS as readonly string[]).includes(name))
    throw invalid("OTEL_TRACES_SAMPLER", name, `one of ${SAMPLERS.join(", ")}`);
  const argument = env.OTEL_TRACES_SAMPLER_ARG?.trim();
  const ratio = argument ? Number(argument) : 1;
  if (name.endsWith("traceidratio") && !(ratio >= 0 && ratio <= 1))
    throw invalid("OTEL_TRACES_SAMPLER_ARG", argument ?? "", "a number from 0 to 1");
  const root = name.endsWith("always_off")
    ? new sdk.AlwaysOffSampler()
    : name.endsWith("traceidratio")
      ? new sdk.TraceIdRatioBasedSampler(ratio)
      : new sdk.AlwaysOnSampler();
  return name.startsWith("parentbased_") ? new sdk.ParentBasedSampler({ root }) : root;
}

/**
 * The resource: OTEL_RESOURCE_ATTRIBUTES (`key=value` pairs, comma-separated, values percent-encoded), then
 * `service.name` from OTEL_SERVICE_NAME (which wins), else `sessiond`.
 */
export function resourceAttributes(env: Env): Record<string, string> {
  const attributes: Record<string, string> = {};
  for (const pair of (env.OTEL_RESOURCE_ATTRIBUTES ?? "").split(",")) {
    if (pair.trim() === "") continue;
    const at = pair.indexOf("=");
    const key = at > 0 ? pair.slice(0, at).trim() : "";
    let value: string | undefined;
    try {
      value = at > 0 ? decodeURIComponent(pair.slice(at + 1).trim()) : undefined;
    } catch {
      value = undefined;
    }
    if (!key || value === undefined)
      throw invalid("OTEL_RESOURCE_ATTRIBUTES", pair, "key=value pairs with percent-encoded values");
    attributes[key] = value;
  }
  attributes["service.name"] = env.OTEL_SERVICE_NAME || attributes["service.name"] || "sessiond";
  return attributes;
}
