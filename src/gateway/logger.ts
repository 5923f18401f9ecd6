import { type DestinationStream, type Logger, pino } from "pino";
import { redactJson, redactSecrets } from "../secrets/index.js";

/** Header and field paths that must never reach a log line, should anything ever log them. */
export const REDACT_PATHS = [
  "req.headers.authorization",
  'req.headers["x-sessiond-token"]',
  'req.headers["x-goclaw-token"]',
  "headers.authorization",
  'headers["x-sessiond-token"]',
  'headers["x-goclaw-token"]',
  "token",
  "apiKey",
  "*.token",
  "*.apiKey",
];

/**
 * Where log lines go: stdout by default, written in batches (at least 8 KiB, or whatever 100 ms gathered)
 * rather than a write per line, which cost more than the rest of a request's logging. Buffered lines are
 * flushed when the process exits.
 */
export function logDestination(dest: number | string = 1): DestinationStream {
  return pino.destination({ dest, sync: false, minLength: 8192, periodicFlush: 100 });
}

/** A log line's fields with secrets scrubbed from every string; an error becomes its scrubbed message and stack. */
function scrubFields(fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) {
    out[key] =
      value instanceof Error
        ? { type: value.name, message: redactSecrets(value.message), stack: redactSecrets(value.stack ?? "") }
        : redactJson(value);
  }
  return out;
}

/**
 * JSON lines on `destination` (batched stdout by default), with credentials redacted: the listed paths, and
 * every secret shape in any field or message (a provider's error may echo a key).
 */
export function createGatewayLogger(
  options: { level?: string; destination?: DestinationStream } = {},
): Logger {
  return pino(
    {
      name: "sessiond",
      level: options.level ?? "info",
      redact: { paths: REDACT_PATHS, censor: "[redacted]" },
      formatters: { log: scrubFields },
      hooks: {
        logMethod(args, method) {
          method.apply(
            this,
            args.map((arg) => (typeof arg === "string" ? redactSecrets(arg) : arg)) as typeof args,
          );
        },
      },
    },
    options.destination ?? logDestination(),
  );
}
