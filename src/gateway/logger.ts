import { type DestinationStream, type Logger, pino } from "pino";

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

/** JSON lines on `destination` (batched stdout by default), with credentials redacted. */
export function createGatewayLogger(
  options: { level?: string; destination?: DestinationStream } = {},
): Logger {
  return pino(
    {
      name: "sessiond",
      level: options.level ?? "info",
      redact: { paths: REDACT_PATHS, censor: "[redacted]" },
    },
    options.destination ?? logDestination(),
  );
}
