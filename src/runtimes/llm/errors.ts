import { SessiondError } from "../../model/errors.js";
import { redactSecrets } from "../../secrets/index.js";

export type LlmErrorKind =
  | "auth"
  | "rate_limit"
  | "timeout"
  | "aborted"
  | "connection"
  | "bad_request"
  | "server"
  | "bad_response"
  | "unknown";

/**
 * A failed call to an LLM provider. A plain Error rather than a SessiondError: the same client serves
 * turns, compaction and titles, and each caller decides which code (if any) the failure becomes.
 * It never carries the provider SDK's error as `cause`, since that may hold request headers or echo
 * them from the response body; the message is scrubbed of the API key.
 */
export class LlmError extends Error {
  readonly provider: string;
  readonly kind: LlmErrorKind;
  readonly status: number | undefined;

  constructor(provider: string, kind: LlmErrorKind, message: string, status?: number) {
    super(message);
    this.name = "LlmError";
    this.provider = provider;
    this.kind = kind;
    this.status = status;
  }

  /** Worth trying again later: rate limits, timeouts, connection and server errors. */
  get retryable(): boolean {
    return (
      this.kind === "rate_limit" ||
      this.kind === "timeout" ||
      this.kind === "connection" ||
      this.kind === "server"
    );
  }
}

export function isLlmError(error: unknown): error is LlmError {
  return error instanceof LlmError;
}

/**
 * Removes the key, any bearer token and every other secret shape from text that may echo request headers
 * or a provider's view of the request (some echo the key they were sent, or another one).
 */
export function scrubSecret(text: string, secret: string | undefined | null): string {
  let out = text;
  if (secret) out = out.split(secret).join("[redacted]");
  return redactSecrets(out.replace(/(Bearer\s+)[^\s"',;]+/gi, "$1[redacted]"));
}

function kindOfStatus(status: number): LlmErrorKind {
  if (status === 401 || status === 403) return "auth";
  if (status === 429) return "rate_limit";
  if (status === 408) return "timeout";
  if (status >= 500) return "server";
  return "bad_request";
}

type ErrorClass = abstract new (...args: never[]) => Error;

/** The error classes both SDKs export under the same names. */
export interface SdkErrorClasses {
  APIError: ErrorClass;
  APIUserAbortError: ErrorClass;
  APIConnectionError: ErrorClass;
  APIConnectionTimeoutError: ErrorClass;
}

/** Maps an error thrown by the `openai` or `@anthropic-ai/sdk` client to an LlmError. */
export function toLlmError(
  error: unknown,
  provider: string,
  sdk: SdkErrorClasses,
  secret: string | undefined | null,
  signal?: AbortSignal,
): LlmError {
  if (error instanceof LlmError) return error;
  const raw = error instanceof Error ? error.message : String(error);
  const message = `${provider}: ${scrubSecret(raw, secret)}`;
  if (signal?.aborted || error instanceof sdk.APIUserAbortError) {
    return new LlmError(provider, "aborted", `${provider}: request aborted`);
  }
  if (error instanceof sdk.APIConnectionTimeoutError) return new LlmError(provider, "timeout", message);
  if (error instanceof sdk.APIConnectionError) return new LlmError(provider, "connection", message);
  const status = (error as { status?: unknown } | null)?.status;
  if (error instanceof sdk.APIError && typeof status === "number") {
    return new LlmError(provider, kindOfStatus(status), message, status);
  }
  return new LlmError(provider, "unknown", message);
}

export interface ResolvedKeyOptions {
  apiKey?: string | undefined;
  apiKeyEnv?: string | undefined;
}

/**
 * The API key: given directly, else read from the env var `apiKeyEnv` names (an error when that
 * variable is unset, naming the variable and never a value), else `fallbackEnv`, else undefined.
 */
export function resolveApiKey(
  provider: string,
  options: ResolvedKeyOptions,
  fallbackEnv?: string,
): string | undefined {
  if (options.apiKey !== undefined) {
    if (typeof options.apiKey !== "string" || options.apiKey.trim() === "") {
      throw new SessiondError("INVALID_ARGUMENT", `${provider}: apiKey must be a non-empty string`);
    }
    return options.apiKey;
  }
  if (options.apiKeyEnv !== undefined) {
    const value = process.env[options.apiKeyEnv];
    if (!value) {
      throw new SessiondError(
        "INVALID_ARGUMENT",
        `${provider}: the environment variable ${options.apiKeyEnv} (apiKeyEnv) is not set`,
        { details: { apiKeyEnv: options.apiKeyEnv } },
      );
    }
    return value;
  }
  if (fallbackEnv) return process.env[fallbackEnv] || undefined;
  return undefined;
}

export interface CommonModelOptions {
  model: string;
  baseUrl?: string | undefined;
  contextWindow?: number | undefined;
  timeoutMs?: number | undefined;
  maxRetries?: number | undefined;
}

/** Throws INVALID_ARGUMENT for a config no request could succeed with. */
export function validateModelOptions(
  provider: string,
  options: CommonModelOptions,
  rules: { requireBaseUrl?: boolean } = {},
): void {
  const bad = (message: string): never => {
    throw new SessiondError("INVALID_ARGUMENT", `${provider}: ${message}`);
  };
  if (typeof options !== "object" || options === null) bad("the model config must be an object");
  if (rules.requireBaseUrl && options.baseUrl === undefined) bad("baseUrl is required");
  if (typeof options.model !== "string" || options.model.trim() === "")
    bad("model must be a non-empty string");
  if (options.baseUrl !== undefined) {
    let url: URL | undefined;
    try {
      url = new URL(options.baseUrl);
    } catch {
      url = undefined;
    }
    if (!url || (url.protocol !== "http:" && url.protocol !== "https:")) {
      bad(`baseUrl must be an http(s) URL, got ${JSON.stringify(options.baseUrl)}`);
    }
  }
  const positive = (value: number | undefined, label: string, allowZero: boolean): void => {
    if (value === undefined) return;
    if (!Number.isInteger(value) || value < 0 || (!allowZero && value === 0)) {
      bad(`${label} must be a ${allowZero ? "non-negative" : "positive"} integer, got ${value}`);
    }
  };
  positive(options.contextWindow, "contextWindow", false);
  positive(options.timeoutMs, "timeoutMs", false);
  positive(options.maxRetries, "maxRetries", true);
}
