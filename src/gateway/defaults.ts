/** The gateway's defaults, apart from the server so that `sessiond --help` need not load it. */
export const DEFAULT_HOST = "127.0.0.1";
export const DEFAULT_PORT = 7420;
export const DEFAULT_GRACE_MS = 10_000;
