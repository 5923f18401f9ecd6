import { setTimeout as delay } from "node:timers/promises";

/** A reply that could not be delivered; its message names the platform call and status, never a URL or token. */
export class DeliveryError extends Error {
  constructor(
    message: string,
    readonly status: number | undefined,
    readonly attempts: number,
  ) {
    super(message);
    this.name = "DeliveryError";
  }
}

export interface PlatformRequest {
  /** What the call is, for errors and logs: `telegram sendMessage`. The URL is never shown (it may hold a token). */
  what: string;
  method?: "POST" | "PUT" | "PATCH" | "GET";
  url: string;
  headers?: Record<string, string>;
  /** Sent as JSON, or as a form when it is URLSearchParams. */
  body?: unknown;
  /** An error message when a 2xx answer still says it failed (Slack's `{ok: false}`), else undefined. */
  failed?: (body: unknown) => string | undefined;
}

export interface RetryOptions {
  /** Tries in all; default 5. */
  attempts?: number;
  /** The first backoff; it doubles per try, up to 30 s. Default 500 ms. */
  backoffMs?: number;
  /** A Retry-After longer than this gives up instead of waiting; default 120 s. */
  maxRetryAfterMs?: number;
  /** How to wait between tries (tests record the waits instead of sleeping). */
  wait?: (ms: number, signal?: AbortSignal) => Promise<void>;
  signal?: AbortSignal;
  /** How long one try may take before it counts as failed (a platform that accepts and never answers); default 30 s. */
  timeoutMs?: number;
}

/** Waits `ms`, or less when `signal` aborts first (it never rejects). */
export function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return delay(ms, undefined, signal ? { signal } : undefined).then(
    () => {},
    () => {},
  );
}

/**
 * Calls a platform's API and returns its JSON answer. 429 and 5xx answers and network errors are tried
 * again after the platform's Retry-After (header, or `retry_after` in the body as Telegram and Discord
 * send it), else a doubling backoff; other 4xx fail at once.
 */
export async function callPlatform(request: PlatformRequest, options: RetryOptions = {}): Promise<unknown> {
  const attempts = options.attempts ?? 5;
  const wait = options.wait ?? pause;
  const timeoutMs = options.timeoutMs ?? 30_000;
  let backoff = options.backoffMs ?? 500;
  let last = "";
  let lastStatus: number | undefined;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    let waitMs = backoff;
    try {
      const payload = request.body;
      const form = payload instanceof URLSearchParams;
      const res = await fetch(request.url, {
        method: request.method ?? "POST",
        headers: {
          ...(payload !== undefined && !form ? { "content-type": "application/json" } : {}),
          ...request.headers,
        },
        ...(payload !== undefined ? { body: form ? payload : JSON.stringify(payload) } : {}),
        signal: options.signal
          ? AbortSignal.any([options.signal, AbortSignal.timeout(timeoutMs)])
          : AbortSignal.timeout(timeoutMs),
      });
      const body = await readBody(res);
      lastStatus = res.status;
      if (res.ok) {
        const failure = request.failed?.(body);
        if (failure === undefined) return body;
        throw new DeliveryError(`${request.what} failed: ${failure}`, res.status, attempt);
      }
      last = `${request.what} answered ${res.status}${describe(body)}`;
      if (res.status !== 429 && res.status < 500) throw new DeliveryError(last, res.status, attempt);
      const after = retryAfterMs(res.headers.get("retry-after"), body);
      if (after !== undefined) {
        if (after > (options.maxRetryAfterMs ?? 120_000)) {
          throw new DeliveryError(
            `${last}; Retry-After ${after} ms is too long to wait`,
            res.status,
            attempt,
          );
        }
        waitMs = after;
      }
    } catch (error) {
      if (error instanceof DeliveryError) throw error;
      if (options.signal?.aborted) throw new DeliveryError(`${request.what} cancelled`, undefined, attempt);
      lastStatus = undefined;
      last =
        (error as Error).name === "TimeoutError"
          ? `${request.what} timed out after ${timeoutMs} ms`
          : `${request.what} could not connect: ${connectReason(error)}`;
    }
    if (attempt < attempts) {
      await wait(waitMs, options.signal);
      backoff = Math.min(backoff * 2, 30_000);
    }
  }
  throw new DeliveryError(`${last} (after ${attempts} tries)`, lastStatus, attempts);
}

async function readBody(res: Response): Promise<unknown> {
  const text = await res.text();
  if (text === "") return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** A short reason from the platform's error body: Telegram's `description`, Slack's `error`, Discord's `message`. */
function describe(body: unknown): string {
  if (typeof body !== "object" || body === null) return "";
  const b = body as Record<string, unknown>;
  const reason = [b.description, b.error, b.message].find((v) => typeof v === "string");
  return typeof reason === "string" ? `: ${reason.slice(0, 200)}` : "";
}

/**
 * Retry-After in seconds or as an HTTP date; else the body's `retry_after` (seconds: Discord, and
 * Telegram's `parameters.retry_after`) or `retry_after_ms` (Matrix).
 */
export function retryAfterMs(header: string | null, body: unknown): number | undefined {
  if (header !== null && header.trim() !== "") {
    const seconds = Number(header);
    if (Number.isFinite(seconds) && seconds >= 0) return Math.ceil(seconds * 1000);
    const date = Date.parse(header);
    if (Number.isFinite(date)) return Math.max(0, date - Date.now());
  }
  if (typeof body === "object" && body !== null) {
    const b = body as {
      retry_after?: unknown;
      retry_after_ms?: unknown;
      parameters?: { retry_after?: unknown };
    };
    const seconds = b.retry_after ?? b.parameters?.retry_after;
    if (typeof seconds === "number" && seconds >= 0) return Math.ceil(seconds * 1000);
    if (typeof b.retry_after_ms === "number" && b.retry_after_ms >= 0) return Math.ceil(b.retry_after_ms);
  }
  return undefined;
}

/** fetch says only "fetch failed": the cause (ECONNREFUSED, ENOTFOUND, …) is what an operator can act on. */
function connectReason(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
  const code = typeof cause?.code === "string" ? cause.code : undefined;
  const message = (error as Error).message;
  return code ? `${message} (${code})` : message;
}
