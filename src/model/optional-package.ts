import { SessiondError } from "./errors.js";

/**
 * The packages sessiond uses only for some runtimes or functions. They are optional peer dependencies:
 * an install that never uses them does without them (the agent SDKs bring native CLIs of hundreds of MB).
 */
export const OPTIONAL_PACKAGES = {
  openai: "OpenAI-compatible models",
  "@anthropic-ai/sdk": "Anthropic models",
  "@anthropic-ai/claude-agent-sdk": "claude-code agents",
  "@openai/codex-sdk": "codex agents",
  "@a2a-js/sdk": "a2a agents",
  "gpt-tokenizer": "exact token counts (countTokens)",
  "@discordjs/ws": "the Discord Gateway (channels.discord.gateway)",
  pg: "the PostgreSQL store (store.backend: postgres)",
  "@opentelemetry/sdk-trace": "tracing (OTEL_TRACES_EXPORTER or OTEL_EXPORTER_OTLP_ENDPOINT)",
  "@opentelemetry/resources": "tracing (OTEL_TRACES_EXPORTER or OTEL_EXPORTER_OTLP_ENDPOINT)",
  "@opentelemetry/exporter-trace-otlp-http": "tracing (OTEL_TRACES_EXPORTER or OTEL_EXPORTER_OTLP_ENDPOINT)",
} as const;

export type OptionalPackage = keyof typeof OPTIONAL_PACKAGES;

/**
 * Runs `load` (a dynamic `import()` of `name` or one of its subpaths) once and keeps its promise; a
 * missing package becomes PACKAGE_MISSING naming what to install, and a failed load is tried again next time.
 */
export function optionalPackage<T>(name: OptionalPackage, load: () => Promise<T>): () => Promise<T> {
  let loaded: Promise<T> | undefined;
  return () => {
    loaded ??= load().catch((error: unknown) => {
      loaded = undefined;
      throw isMissing(error, name) ? packageMissing(name, error) : error;
    });
    return loaded;
  };
}

export function packageMissing(name: OptionalPackage, cause?: unknown): SessiondError {
  return new SessiondError(
    "PACKAGE_MISSING",
    `${name} is not installed (${OPTIONAL_PACKAGES[name]} need it): npm install ${name}`,
    { details: { package: name }, ...(cause === undefined ? {} : { cause }) },
  );
}

/** Node's error for the package itself being absent, not for something missing inside it. */
function isMissing(error: unknown, name: string): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return (
    (code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND") &&
    typeof message === "string" &&
    (message.includes(`'${name}'`) || message.includes(`'${name}/`) || message.includes(`"${name}"`))
  );
}
