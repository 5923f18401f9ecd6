import { CommanderError } from "commander";
import { type ErrorCode, isSessiondError } from "../model/errors.js";
import { describeSystemError, isSystemError } from "./system-errors.js";

/** Exit codes: documented in the `--help` epilogue, kept in one place. */
export const EXIT_OK = 0;
export const EXIT_ERROR = 1;
export const EXIT_USAGE = 2;

/** Engine errors that mean the command line itself was wrong, so they exit like a usage error. */
const USAGE_CODES: ReadonlySet<ErrorCode> = new Set(["INVALID_KEY", "INVALID_ARGUMENT", "INVALID_ENTRY"]);

/** A failure the CLI itself reports as `<prefix>: message`, with no stack trace. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT_ERROR,
    readonly prefix = "error",
  ) {
    super(message);
  }
}

/** A command line that cannot run as written (a missing or conflicting flag): exit 2. */
export class UsageError extends CliError {
  constructor(message: string) {
    super(message, EXIT_USAGE);
  }
}

/** The user answered no to a confirmation: exit 1, nothing changed. */
export class AbortedError extends CliError {
  constructor(message: string) {
    super(message, EXIT_ERROR, "aborted");
  }
}

export const EXIT_CODES_HELP = `Exit codes:
  0  success
  1  error: the command was valid but failed (e.g. SESSION_NOT_FOUND, CONFIG_INVALID, STORE_*)
  2  usage: unknown command or option, missing argument, bad option value, or input the
     engine rejects as invalid (INVALID_KEY, INVALID_ARGUMENT, INVALID_ENTRY)

Errors are printed to stderr as "error [CODE]: message" (usage errors as "error: message").`;

export interface ErrorSink {
  stderr(text: string): void;
}

/** Prints an error the way the CLI promises and returns the exit code; stack traces only for bugs. */
export function reportError(error: unknown, out: ErrorSink): number {
  if (error instanceof CommanderError) {
    // Commander has already printed its message (or the help text).
    return error.exitCode === 0 ? EXIT_OK : EXIT_USAGE;
  }
  if (error instanceof CliError) {
    out.stderr(`${error.prefix}: ${error.message}\n`);
    return error.exitCode;
  }
  if (isSessiondError(error)) {
    out.stderr(`error [${error.code}]: ${error.message}\n`);
    return USAGE_CODES.has(error.code) ? EXIT_USAGE : EXIT_ERROR;
  }
  if (isSystemError(error)) {
    out.stderr(`error [${error.code}]: ${describeSystemError(error)}\n`);
    return EXIT_ERROR;
  }
  const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
  out.stderr(`error: unexpected failure: ${text}\n`);
  return EXIT_ERROR;
}
