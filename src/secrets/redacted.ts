/** What a scrubbed secret is replaced with: obviously not data, so it cannot be replayed as a value. */
export const REDACTED = "[redacted]";
