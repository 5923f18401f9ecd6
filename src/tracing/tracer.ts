import type { Tracer } from "@opentelemetry/api";
import { optionalPackage } from "../model/optional-package.js";
import { batchOptions, resourceAttributes, samplerFrom } from "./sdk-env.js";
import { conversationKey, hashConversationId, type TracingSettings, tracingSettings } from "./settings.js";

/** What the spans need once tracing is on: the tracer and how a session id becomes a conversation id. */
export interface ActiveTracing {
  readonly tracer: Tracer;
  conversationId(sessionId: string): string;
  readonly api: typeof import("@opentelemetry/api");
}

// A dependency (prom-client installs it anyway), imported only when tracing is on.
const loadApi = () => import("@opentelemetry/api");
const loadSdk = optionalPackage("@opentelemetry/sdk-trace", () => import("@opentelemetry/sdk-trace"));
const loadResources = optionalPackage("@opentelemetry/resources", () => import("@opentelemetry/resources"));
const loadExporter = optionalPackage(
  "@opentelemetry/exporter-trace-otlp-http",
  () => import("@opentelemetry/exporter-trace-otlp-http"),
);

/** Each optional package tracing loads, by name: what `startTracing` imports (and its first-use errors). */
export const TRACING_PACKAGES = {
  "@opentelemetry/sdk-trace": loadSdk,
  "@opentelemetry/resources": loadResources,
  "@opentelemetry/exporter-trace-otlp-http": loadExporter,
} as const;

let active: ActiveTracing | undefined;
let shutdown: (() => Promise<void>) | undefined;

/** The tracing in effect, or undefined when it is off (every hook is then a no-op). */
export function activeTracing(): ActiveTracing | undefined {
  return active;
}

/**
 * Starts tracing when the OTEL_* variables say so (see tracingSettings); the OpenTelemetry packages are
 * imported only then. The exporter reads its endpoint, headers and timeout from the standard variables;
 * it speaks OTLP/HTTP with JSON bodies. The sampler, batching and resource come from sdk-env.ts.
 */
export async function startTracing(
  env: Record<string, string | undefined>,
  dataDir: string,
): Promise<TracingSettings> {
  const settings = tracingSettings(env);
  if (!settings.enabled || active) return settings;
  const batch = batchOptions(env);
  const attributes = resourceAttributes(env);
  const [api, sdk, resources, exporter] = await Promise.all([
    loadApi(),
    loadSdk(),
    loadResources(),
    loadExporter(),
  ]);
  const sampler = samplerFrom(sdk, env);
  const key = settings.rawConversationId ? undefined : conversationKey(env, dataDir);
  const provider = new sdk.TracerProvider({
    resource: resources.resourceFromAttributes(attributes),
    sampler,
    spanProcessors: [new sdk.BatchSpanProcessor({ ...batch, exporter: new exporter.OTLPTraceExporter() })],
  });
  active = {
    api,
    tracer: provider.getTracer("sessiond"),
    conversationId: (sessionId) => (key ? hashConversationId(key, sessionId) : sessionId),
  };
  shutdown = () => provider.shutdown();
  return settings;
}

/** Exports the spans still buffered and stops; tracing is off afterwards. */
export async function stopTracing(): Promise<void> {
  const stop = shutdown;
  active = undefined;
  shutdown = undefined;
  await stop?.();
}
