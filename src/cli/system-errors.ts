/** What the operating system said, in words a person can act on; one line, never a stack. */

interface SystemError extends Error {
  code: string;
  syscall?: string;
  path?: string;
  address?: string;
  port?: number;
}

const REASONS: Readonly<Record<string, string>> = {
  EADDRNOTAVAIL: "address not available (it is not an address of this machine)",
  EADDRINUSE: "address already in use (another process listens there)",
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  ENOENT: "no such file or directory",
  EISDIR: "is a directory",
  ENOTDIR: "a part of the path is not a directory",
  ENOSPC: "no space left on the device",
  EROFS: "read-only file system",
  EEXIST: "already exists",
  EMFILE: "too many open files",
  ENOTFOUND: "host not found",
  ECONNREFUSED: "connection refused",
};

/** An error from Node's fs, net or dns calls (it has an `E…` code). */
export function isSystemError(error: unknown): error is SystemError {
  const code: unknown = error instanceof Error ? (error as { code?: unknown }).code : undefined;
  return typeof code === "string" && /^E[A-Z]+$/.test(code);
}

/** The reason for a code, e.g. "no space left on the device"; the code itself when it is not one we know. */
export function systemReason(code: string): string {
  return REASONS[code] ?? code;
}

/** One line for a system error: what was being done, on what, and why it failed. */
export function describeSystemError(error: SystemError): string {
  const reason = systemReason(error.code);
  if (error.syscall === "listen" || error.syscall === "bind") {
    const where =
      error.address === undefined
        ? ""
        : ` on ${error.address}${error.port === undefined ? "" : `:${error.port}`}`;
    const hint = error.code === "EADDRNOTAVAIL" ? "; use --host 127.0.0.1, or 0.0.0.0 for every address" : "";
    return `cannot listen${where}: ${reason}${hint}`;
  }
  if (error.path !== undefined) return `${error.path}: ${reason}`;
  return error.syscall === undefined ? reason : `${error.syscall}: ${reason}`;
}
