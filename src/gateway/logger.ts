import { type DestinationStream, type Logger, pino } from "pino";

/** Header and field paths that must never reach a log line, should anything ever log them. */
export const REDACT_PATHS = [
  "req.headers.authorization",
  'req.headers["x-sessiond-token"]',
  "headers.authorization",
  'headers["x-sessiond-token"]',
  "token",
  "apiKey",
  "*.token",
  "*.apiKey",
];

/** JSON lines on stdout (or `destination`), with credentials redacted. */
export function createGatewayLogger(
  options: { level?: string; destination?: DestinationStream } = {},
): Logger {
  return pino(
    {
      name: "sessiond",
      level: options.level ?? "info",
      redact: { paths: REDACT_PATHS, censor: "[redacted]" },
    },
    options.destination,
  );
}
